import Foundation
import RillTestSupport
import RillWorkloads
import Testing

@testable import Rill

/// Keys of long values cut to a prefix, against the whole keys: cutting never reverses the order
/// of two values, ties only values that are both cut, and every key stays self-delimiting.
@Suite struct IndexKeyCutTests {
    /// Random strings around a cut of `limit` bytes: a shared long prefix, then ASCII, multi-byte
    /// scalars (2, 3 and 4 bytes), zero bytes and combining marks placed near the cut.
    static func randomStrings(limit: Int, count: Int, using random: inout SeededGenerator) -> [String] {
        let shared = String(repeating: "a", count: limit - 3)
        let pieces = ["a", "b", "z", "é", "e\u{301}", "€", "𝄞", "\u{0}", "\u{7F}", "ÿ", "\u{FFFF}"]
        return (0..<count).map { _ in
            var text = Int.random(in: 0..<4, using: &random) == 0 ? "" : shared
            for _ in 0..<Int.random(in: 0...8, using: &random) { text += pieces.randomElement(using: &random)! }
            if Bool.random(using: &random) {
                text += String(repeating: "q", count: Int.random(in: 0...40, using: &random))
            }
            return text
        }
    }

    static func whole(_ value: RecordValue) throws -> [UInt8] {
        var key: [UInt8] = []
        try IndexKey.append(value, to: &key)
        return key
    }

    static func cut(_ value: RecordValue, limit: Int) throws -> (key: [UInt8], isCut: Bool) {
        var key: [UInt8] = []
        let isCut = try IndexKey.append(value, to: &key, payloadLimit: limit)
        return (key, isCut)
    }

    /// Checks every pair of `values`: whole order a < b gives cut(a) <= cut(b), and cut keys
    /// are equal only for equal values or two cut ones.
    static func checkOrder(_ values: [RecordValue], limit: Int, seed: String) throws {
        let keys = try values.map { (whole: try whole($0), cut: try cut($0, limit: limit)) }
        for (a, left) in keys.enumerated() {
            #expect(left.cut.key.count <= limit + 3, "\(seed): a cut key is longer than its bound")
            #expect(left.cut.isCut == (left.whole.count > limit + 3), "\(seed)")
            if !left.cut.isCut { #expect(left.cut.key == left.whole, "\(seed): a short value's key changed") }
            for right in keys[(a + 1)...] {
                if left.whole.lexicographicallyPrecedes(right.whole) {
                    #expect(
                        !right.cut.key.lexicographicallyPrecedes(left.cut.key), "\(seed): cutting reversed an order")
                } else if right.whole.lexicographicallyPrecedes(left.whole) {
                    #expect(
                        !left.cut.key.lexicographicallyPrecedes(right.cut.key), "\(seed): cutting reversed an order")
                }
                if left.cut.key == right.cut.key, left.whole != right.whole {
                    #expect(left.cut.isCut && right.cut.isCut, "\(seed): a whole key ties with another value")
                }
            }
        }
    }

    @Test(arguments: [14, 61, 253])
    func cutStringsKeepTheOrderOfWholeOnes(limit: Int) throws {
        var random = SeededGenerator(label: "cut strings \(limit)")
        let strings = Self.randomStrings(limit: limit, count: 160, using: &random)
        try Self.checkOrder(strings.map(RecordValue.string), limit: limit, seed: "seed \(random.seed)")
        // Strings Swift calls equal get equal keys, cut or not.
        let composed = String(repeating: "é", count: limit)
        let decomposed = String(repeating: "e\u{301}", count: limit)
        #expect(composed == decomposed)
        #expect(try Self.cut(.string(composed), limit: limit) == Self.cut(.string(decomposed), limit: limit))
    }

    @Test(arguments: [14, 253])
    func cutDataKeepsTheOrderOfWholeData(limit: Int) throws {
        var random = SeededGenerator(label: "cut data \(limit)")
        let values: [RecordValue] = (0..<160).map { _ in
            var bytes = [UInt8](repeating: 7, count: Int.random(in: 0...1, using: &random) * (limit - 2))
            for _ in 0..<Int.random(in: 0...8, using: &random) {
                bytes.append([0, 0, 1, 0xFF, 7, 8].randomElement(using: &random)!)
            }
            return .data(Data(bytes))
        }
        try Self.checkOrder(values, limit: limit, seed: "seed \(random.seed)")
    }

    @Test func cutKeysAreSelfDelimitingAndSkipped() throws {
        var random = SeededGenerator(label: "cut compound keys")
        let limit = 30
        for text in Self.randomStrings(limit: limit, count: 100, using: &random) {
            var key: [UInt8] = []
            let isCut = try IndexKey.append(.string(text), to: &key, payloadLimit: limit)
            _ = try IndexKey.append(.int(42), to: &key, payloadLimit: limit)
            _ = try IndexKey.append(.data(Data([0, 1, 2])), to: &key, payloadLimit: limit)
            let id: [UInt8] = [0x02, 0x41, 0x00]
            key += id
            let parsed = try key.withUnsafeBytes { buffer in
                var offset = 0
                let first = try IndexKey.skip(buffer, offset: &offset)
                var next = offset
                let number = try IndexKey.decode(buffer, offset: &next)
                let second = try IndexKey.skip(buffer, offset: &offset)
                let third = try IndexKey.skip(buffer, offset: &offset)
                var start = 0
                let whole = try? IndexKey.decode(buffer, offset: &start)
                return (first.isCut, number, second, third, Array(buffer[offset...]), whole)
            }
            #expect(parsed.0 == isCut)
            #expect(parsed.1 == .int(42))
            #expect(parsed.2 == (false, 0))
            #expect(parsed.3 == (false, 4))  // 00 FF 01 02: the escaped payload
            #expect(parsed.4 == id)
            // A cut value is not a whole one: decoding refuses it.
            #expect(isCut == (parsed.5 == nil))
        }
    }

    @Test func aCutNeverSplitsAnEscapedZeroByte() throws {
        // The cut falls on the first byte of a `00 FF` pair: the pair is left out whole.
        let value = RecordValue.data(Data([1, 2, 3, 0, 0, 0, 5, 6]))
        let (key, isCut) = try Self.cut(value, limit: 4)
        #expect(isCut)
        #expect(key == [0x40, 1, 2, 3, 0x00, 0x02])
        let (longer, _) = try Self.cut(value, limit: 5)
        #expect(longer == [0x40, 1, 2, 3, 0x00, 0xFF, 0x00, 0x02])
    }
}
