import Testing

@testable import Rill

/// `KeyHash` is SipHash-1-3: the reference vectors of `SipHasher13` (key bytes 0 through 15,
/// message `n` the bytes 0 through n - 1), as eight little-endian bytes each.
@Suite struct KeyHashTests {
    static let key: (UInt64, UInt64) = (0x0706_0504_0302_0100, 0x0f0e_0d0c_0b0a_0908)

    /// Vectors 0 through 17 (every tail length, up to two full blocks) and 63.
    static let vectors: [Int: String] = [
        0: "dcc40f055801acab", 1: "93ca577df39bf4c9", 2: "4dd4c74d029bcb82", 3: "fbf7dde7b80af88b",
        4: "2883d388605775cf", 5: "673b53492fd5f9de", 6: "a7229fc5502b0dc5", 7: "4011b19b987d92d3",
        8: "8e9a298d11959036", 9: "e43d066cb38ea425", 10: "7f09ff92ee85de79", 11: "52c34df9c118c170",
        12: "a2d9b457b184a378", 13: "a7ff29120c766f30", 14: "345df9c011a15a60", 15: "5699512a6dd820d3",
        16: "668b907d1add4fcc", 17: "0cd8db639068f29c", 63: "a8b3bbb76290199d",
    ]

    /// The little-endian bytes `hex` spells, as a word.
    static func word(_ hex: String) -> UInt64 {
        let bytes = stride(from: 0, to: 16, by: 2).map { offset -> UInt64 in
            let start = hex.index(hex.startIndex, offsetBy: offset)
            return UInt64(hex[start..<hex.index(start, offsetBy: 2)], radix: 16)!
        }
        return bytes.enumerated().reduce(0) { $0 | $1.element << (8 * UInt64($1.offset)) }
    }

    @Test func referenceVectors() {
        for (length, hex) in Self.vectors {
            let message = (0..<length).map { UInt8($0) }
            let hash = message.withUnsafeBytes { KeyHash.hash($0, key: Self.key) }
            #expect(hash == Self.word(hex), "vector \(length)")
        }
    }

    /// Under the process's key: the same bytes hash alike wherever they lie, and the keys of a
    /// table's records spread over its slots and tags.
    @Test func processKeySpreadsKeys() {
        var storage = [UInt8](repeating: 0, count: 32)
        var slots = [Int](repeating: 0, count: 256)
        for value in 0..<65_536 {
            let key = (0..<9).map { UInt8(truncatingIfNeeded: value >> (8 * min($0, 7))) }
            let hash = key.withUnsafeBytes { KeyHash.hash($0) }
            storage.replaceSubrange(7..<16, with: key)
            let elsewhere = storage.withUnsafeBytes { KeyHash.hash(UnsafeRawBufferPointer(rebasing: $0[7..<16])) }
            #expect(hash == elsewhere)
            slots[hash & 255] += 1
        }
        // 256 slots of 65,536 keys: 256 each on average; a fair hash stays within a few deviations (16).
        #expect(slots.min()! > 256 - 112 && slots.max()! < 256 + 112, "slots \(slots.min()!)...\(slots.max()!)")
    }
}
