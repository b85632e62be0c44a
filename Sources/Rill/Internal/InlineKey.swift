/// A key of at most 16 bytes held in two words, so that an object can compare it without reading
/// an array of its own (a cache miss in a large table): the bytes little-endian, zero past the
/// end, and the length. A longer key is not held (`length` is then -1).
struct InlineKey: Equatable {
    private(set) var low: UInt64
    private(set) var high: UInt64
    private(set) var length: Int

    static let capacity = 16

    init(_ key: UnsafeRawBufferPointer) {
        guard key.count <= Self.capacity else {
            (low, high, length) = (0, 0, -1)
            return
        }
        var words: (UInt64, UInt64) = (0, 0)
        withUnsafeMutableBytes(of: &words) { $0.copyMemory(from: key) }
        (low, high, length) = (UInt64(littleEndian: words.0), UInt64(littleEndian: words.1), key.count)
    }

    init(_ key: [UInt8]) {
        self = key.withUnsafeBytes { InlineKey($0) }
    }

    /// Whether the key is held here (at most 16 bytes).
    var isHeld: Bool { length >= 0 }

    /// The key with bit 5 of each byte set, the padding's too: of a key of ASCII letters, digits
    /// and `_`, its letters lowercased (`A`–`Z` to `a`–`z`), the rest either as it was or a byte
    /// no letter is (`_` becomes DEL). Two such keys are equal in any case of their letters.
    var asciiLowercased: InlineKey {
        let bit5: UInt64 = 0x2020_2020_2020_2020
        var lowered = self
        if isHeld { (lowered.low, lowered.high) = (low | bit5, high | bit5) }
        return lowered
    }
}
