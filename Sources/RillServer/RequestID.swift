import Synchronization

/// The id of a request, logged with it and returned in its `X-Request-Id` header.
///
/// A client's own id (a proxy's, say) is kept when it is sane: 1 to 128 bytes of ASCII letters,
/// digits and `-_.:/+=@`. Anything else, or none, gets one made by the daemon: 16 hex digits.
enum RequestID {
    /// The header that carries it, both ways.
    static let header = "X-Request-Id"

    /// The most bytes a client's id may have.
    static let maxLength = 128

    /// `given` when it is sane, else a new id.
    static func id(given: String?) -> String {
        if let given, isSane(given) { return given }
        return make()
    }

    /// Whether `text` is an id the daemon keeps.
    static func isSane(_ text: String) -> Bool {
        let bytes = text.utf8
        guard (1...maxLength).contains(bytes.count) else { return false }
        return bytes.allSatisfy { byte in
            switch byte {
            case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"),
                UInt8(ascii: "0")...UInt8(ascii: "9"):
                true
            case UInt8(ascii: "-"), UInt8(ascii: "_"), UInt8(ascii: "."), UInt8(ascii: ":"), UInt8(ascii: "/"),
                UInt8(ascii: "+"), UInt8(ascii: "="), UInt8(ascii: "@"):
                true
            default:
                false
            }
        }
    }

    /// A new id: 16 hex digits, unique in the process and not guessable from the one before.
    ///
    /// The `n`-th id is `n` mixed with a random key drawn once (SplitMix64's finalizer, a
    /// bijection of 64 bits), not 64 bits of `getrandom` each: a system call in every request
    /// was one of the daemon's dearest steps of a save.
    static func make() -> String {
        let count = made.add(1, ordering: .relaxed).newValue
        return hex(mix(key &+ count &* 0x9E37_79B9_7F4A_7C15))
    }

    /// The ids made so far.
    private static let made = Atomic<UInt64>(0)
    /// The key of this process's ids.
    private static let key = UInt64.random(in: .min ... .max)

    /// SplitMix64's output function: every bit of `value` moves about half of the result's.
    static func mix(_ value: UInt64) -> UInt64 {
        var z = value
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }

    /// `value` in 16 lowercase hex digits.
    static func hex(_ value: UInt64) -> String {
        let digits = Array("0123456789abcdef".utf8)
        return String(unsafeUninitializedCapacity: 16) { buffer in
            for index in 0..<16 {
                buffer[index] = digits[Int((value >> UInt64(60 - 4 * index)) & 0xF)]
            }
            return 16
        }
    }
}
