import Foundation
import RillTestSupport
import RillWorkloads
import Testing

@testable import Rill

/// `IndexKey.skip` finds a number's end a word at a time; these hold it to `decode` on real keys
/// and to a byte-at-a-time reading of the format on arbitrary bytes.
@Suite struct IndexKeySkipTests {
    /// Numbers of every shape: integers, doubles of any bit pattern, and the edges.
    static func randomNumber(using random: inout SeededGenerator) -> RecordValue {
        switch Int.random(in: 0..<6, using: &random) {
        case 0: return .int(Int64.random(in: .min ... .max, using: &random))
        case 1: return .int(Int64.random(in: -300...300, using: &random))
        case 2: return .uint(UInt64.random(in: .min ... .max, using: &random))
        case 3:
            let edges: [Double] = [
                0, -0.0, .infinity, -.infinity, .leastNonzeroMagnitude, -.leastNonzeroMagnitude,
                .greatestFiniteMagnitude, -.greatestFiniteMagnitude, .leastNormalMagnitude, 0x1p63, -0x1p63, 0.1, -0.1,
            ]
            return .double(edges.randomElement(using: &random)!)
        case 4: return .double(Double(Int.random(in: 0..<9_000_000, using: &random)) / 100)
        default:
            let double = Double(bitPattern: UInt64.random(in: .min ... .max, using: &random))
            return .double(double.isNaN ? 1.25 : double)
        }
    }

    @Test func aNumbersEndIsWhereDecodeEnds() throws {
        var random = SeededGenerator(label: "index key skip")
        for _ in 0..<20_000 {
            let value = Self.randomNumber(using: &random)
            var key: [UInt8] = []
            _ = try IndexKey.append(value, to: &key, payloadLimit: 64)
            let length = key.count
            // Bytes after the number, as an identifier follows it in an index key.
            for _ in 0..<Int.random(in: 0...12, using: &random) {
                key.append(UInt8.random(in: 0...255, using: &random))
            }
            try key.withUnsafeBytes { buffer in
                var skipped = 0
                let extent = try IndexKey.skip(buffer, offset: &skipped)
                var decoded = 0
                _ = try IndexKey.decode(buffer, offset: &decoded)
                #expect(
                    skipped == length && decoded == length && extent == (false, 0),
                    "\(value): skip \(skipped), decode \(decoded), key \(length) bytes; seed \(random.seed)")
            }
            // Any number cut short does not skip.
            let cut = Int.random(in: 0..<length, using: &random)
            Array(key[..<cut]).withUnsafeBytes { buffer in
                var offset = 0
                #expect(throws: IndexKeyError.self, "\(value) cut to \(cut) bytes; seed \(random.seed)") {
                    try IndexKey.skip(buffer, offset: &offset)
                }
            }
        }
    }

    /// The format's reading of a number, a byte at a time: tag, two exponent bytes, then groups
    /// until one whose low bit (flipped for a negative number) is clear, at most nine.
    static func referenceEnd(of key: [UInt8], from start: Int) -> Int? {
        guard start < key.count, key[start] == 0x21 || key[start] == 0x23 else { return nil }
        let flip: UInt8 = key[start] == 0x21 ? 0xFF : 0
        var at = start + 3
        for _ in 0..<9 {
            guard at < key.count else { return nil }
            defer { at += 1 }
            if (key[at] ^ flip) & 1 == 0 { return at + 1 }
        }
        return nil
    }

    @Test func arbitraryBytesSkipAsTheFormatReads() {
        var random = SeededGenerator(label: "index key skip, arbitrary bytes")
        for _ in 0..<50_000 {
            let start = Int.random(in: 0...3, using: &random)
            var key = (0..<Int.random(in: start...(start + 20), using: &random)).map { _ in
                // Mostly bytes with the low bit set, so that runs of groups reach the limit.
                Bool.random(using: &random)
                    ? UInt8.random(in: 0...255, using: &random) | 1 : UInt8.random(in: 0...255, using: &random)
            }
            if start < key.count { key[start] = Bool.random(using: &random) ? 0x21 : 0x23 }
            let expected = Self.referenceEnd(of: key, from: start)
            key.withUnsafeBytes { buffer in
                var offset = start
                let skipped = try? IndexKey.skip(buffer, offset: &offset)
                #expect(
                    (skipped == nil ? nil : offset) == expected,
                    "\(key) from \(start): skip \(skipped == nil ? "threw" : "\(offset)"), expected \(expected.map(String.init) ?? "a throw"); seed \(random.seed)"
                )
            }
        }
    }
}
