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

    /// A new id: 64 random bits in 16 hex digits.
    static func make() -> String {
        let hex = String(UInt64.random(in: .min ... .max), radix: 16)
        return String(repeating: "0", count: 16 - hex.count) + hex
    }
}
