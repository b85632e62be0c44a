/// SipHash-1-3 of a byte string under a key drawn once per process: the function `Hasher` uses,
/// computed in one pass over the bytes without `Hasher`'s buffering, for the short keys of the
/// tables live queries look up several times a row (`KeyedObjects`).
///
/// Keyed for each process, so that keys written to collide cannot make a table slow, and by a
/// seed of each table (`hash(_:seed:)`), so that no two tables place the same keys alike.
enum KeyHash {
    private static let key = (UInt64.random(in: .min ... .max), UInt64.random(in: .min ... .max))

    /// The hash of `bytes`.
    @inline(__always)
    static func hash(_ bytes: UnsafeRawBufferPointer) -> Int {
        Int(truncatingIfNeeded: hash(bytes, key: key))
    }

    /// The hash of `bytes` under the process's key changed by `seed`: another function of the
    /// bytes for each seed.
    @inline(__always)
    static func hash(_ bytes: UnsafeRawBufferPointer, seed: UInt64) -> Int {
        Int(truncatingIfNeeded: hash(bytes, key: (key.0 ^ seed, key.1)))
    }

    /// A seed for a new table.
    static func seed() -> UInt64 {
        UInt64.random(in: .min ... .max)
    }

    /// SipHash-1-3 of `bytes` under the key `(k0, k1)`.
    @inline(__always)
    static func hash(_ bytes: UnsafeRawBufferPointer, key: (UInt64, UInt64)) -> UInt64 {
        let (k0, k1) = key
        var state = State(
            v0: k0 ^ 0x736f_6d65_7073_6575, v1: k1 ^ 0x646f_7261_6e64_6f6d,
            v2: k0 ^ 0x6c79_6765_6e65_7261, v3: k1 ^ 0x7465_6462_7974_6573)
        let count = bytes.count
        var offset = 0
        if let base = bytes.baseAddress {
            while offset &+ 8 <= count {
                state.compress(UInt64(littleEndian: base.loadUnaligned(fromByteOffset: offset, as: UInt64.self)))
                offset &+= 8
            }
        }
        // The last block: the bytes left, and the length's low byte at the top.
        var last = UInt64(truncatingIfNeeded: count) << 56
        var shift: UInt64 = 0
        while offset < count {
            last |= UInt64(bytes[offset]) << shift
            shift &+= 8
            offset &+= 1
        }
        state.compress(last)
        state.v2 ^= 0xff
        state.round()
        state.round()
        state.round()
        return state.v0 ^ state.v1 ^ state.v2 ^ state.v3
    }

    private struct State {
        var v0, v1, v2, v3: UInt64

        @inline(__always)
        mutating func compress(_ message: UInt64) {
            v3 ^= message
            round()
            v0 ^= message
        }

        @inline(__always)
        mutating func round() {
            v0 &+= v1
            v1 = rotate(v1, 13)
            v1 ^= v0
            v0 = rotate(v0, 32)
            v2 &+= v3
            v3 = rotate(v3, 16)
            v3 ^= v2
            v0 &+= v3
            v3 = rotate(v3, 21)
            v3 ^= v0
            v2 &+= v1
            v1 = rotate(v1, 17)
            v1 ^= v2
            v2 = rotate(v2, 32)
        }

        @inline(__always)
        private func rotate(_ value: UInt64, _ count: UInt64) -> UInt64 {
            (value << count) | (value >> (64 &- count))
        }
    }
}
