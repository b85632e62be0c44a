import Foundation
import RillWorkloads
import Testing

@testable import Rill

/// The keyed container reads a record's own map in stored order and scans it only at a key asked
/// out of order; a nested map is scanned first. A `Decodable` model of the kinds users write (an
/// enum, an array, a nested struct, optionals, `contains`, `allKeys`, a `superDecoder`, keys read
/// in another order than stored) must read the same from its own record as from the same map one
/// level down, on random maps: the same values, or a failure of the same kind at the same field.
/// (Mutation-checked: `allKeys` without the scan it needs fails it.)
@Suite struct InOrderDecodableTests {
    enum Kind: String, Codable {
        case book, film
    }

    struct Inner: Codable {
        var x: Int
        var y: String?
    }

    struct Base: Codable {
        var owner: String
    }

    struct Mixed: Codable {
        var count: Int
        var kind: Kind
        var tags: [String]
        var note: String?
        var hasLegacy: Bool
        var keyCount: Int
        var when: Date
        var inner: Inner?
        var base: Base

        enum CodingKeys: String, CodingKey {
            case count, kind, tags, note, legacy, when, inner, base
            /// Written, never read: what `allKeys` counted.
            case keys
        }

        /// Reads in one of four orders, chosen by the stored `count` (so that both reads of a
        /// record take the same): `allKeys` first, `contains` early, `inner` before `when` (out of
        /// the stored order), or every key in stored order until `allKeys` at the end.
        init(from decoder: any Decoder) throws {
            let container = try decoder.container(keyedBy: CodingKeys.self)
            count = try container.decode(Int.self, forKey: .count)
            let variant = count.magnitude % 4
            keyCount = variant == 0 ? container.allKeys.count : -1
            kind = try container.decode(Kind.self, forKey: .kind)
            hasLegacy = variant == 1 ? container.contains(.legacy) : false
            tags = try container.decode([String].self, forKey: .tags)
            note = try container.decodeIfPresent(String.self, forKey: .note)
            if variant != 1 { hasLegacy = try container.decodeIfPresent(Bool.self, forKey: .legacy) ?? false }
            if variant == 2 {
                inner = try container.decodeIfPresent(Inner.self, forKey: .inner)
                when = try container.decode(Date.self, forKey: .when)
            } else {
                when = try container.decode(Date.self, forKey: .when)
                inner = try container.decodeIfPresent(Inner.self, forKey: .inner)
            }
            base = try Base(from: container.superDecoder(forKey: .base))
            if variant != 0 { keyCount = container.allKeys.count }
        }

        func encode(to encoder: any Encoder) throws {
            var container = encoder.container(keyedBy: CodingKeys.self)
            try container.encode(count, forKey: .count)
            try container.encode(kind, forKey: .kind)
            try container.encode(tags, forKey: .tags)
            try container.encodeIfPresent(note, forKey: .note)
            try container.encode(hasLegacy, forKey: .legacy)
            try container.encode(when, forKey: .when)
            try container.encodeIfPresent(inner, forKey: .inner)
            try container.encode(base, forKey: .base)
            try container.encode(keyCount, forKey: .keys)
        }
    }

    struct Wrapper: Decodable {
        var inner: Mixed
    }

    static func value(for name: String, _ random: inout SeededGenerator) -> RecordValue {
        if Int.random(in: 0..<12, using: &random) == 0 {
            return [.null, .string("x"), .int(3), .double(1.5), .array([]), .map([])].randomElement(using: &random)!
        }
        switch name {
        case "count": return .int(Int64.random(in: -1_000...1_000, using: &random))
        case "kind": return .string(["book", "film", "song"].randomElement(using: &random)!)
        case "tags": return .array((0..<Int.random(in: 0...3, using: &random)).map { .string("t\($0)") })
        case "note": return .string("n\(Int.random(in: 0...9, using: &random))")
        case "legacy": return .bool(true)
        case "when":
            return .date(Date(timeIntervalSinceReferenceDate: Double(Int.random(in: 0...1_000_000, using: &random))))
        case "inner":
            return .map(
                [RecordField(name: "x", value: .int(Int64.random(in: -9...9, using: &random)))]
                    + (Bool.random(using: &random) ? [RecordField(name: "y", value: .string("why"))] : []))
        default: return .map([RecordField(name: "owner", value: .string("o"))])
        }
    }

    static func randomMap(_ random: inout SeededGenerator) -> [RecordField] {
        var fields: [RecordField] = []
        for name in ["count", "kind", "tags", "note", "legacy", "when", "inner", "base"] {
            let optional = ["note", "legacy", "inner"].contains(name)
            if Int.random(in: 0..<(optional ? 3 : 40), using: &random) == 0 { continue }
            if Int.random(in: 0..<15, using: &random) == 0 {
                fields.append(RecordField(name: "unknown\(fields.count)", value: .int(0)))
            }
            fields.append(RecordField(name: name, value: value(for: name, &random)))
        }
        if Int.random(in: 0..<5, using: &random) == 0 { fields.shuffle(using: &random) }
        return fields
    }

    static func outcome(_ read: () throws -> Mixed) -> String {
        do {
            return "\(try RecordCoder.encode(read()))"
        } catch {
            return InOrderReadTests.failure(error)
        }
    }

    @Test func aModelReadsItsOwnRecordAsTheSameMapNested() throws {
        var random = SeededGenerator(label: "in-order decodable")
        var spare: RecordDecoder?
        var read = 0
        for index in 0..<4_000 {
            let map = Self.randomMap(&random)
            let bytes = RecordValue.map(map).recordBytes()
            let wrapped = RecordValue.map([RecordField(name: "inner", value: .map(map))]).recordBytes()
            let oracle = Self.outcome { try RecordCoder.decode(Wrapper.self, from: wrapped).inner }
            let own = Self.outcome { try RecordCoder.decode(Mixed.self, from: bytes) }
            let reused = Self.outcome {
                try bytes.withUnsafeBytes { try RecordCoder.decode(Mixed.self, from: $0, reusing: &spare) }
            }
            #expect(own == oracle, "record \(index): \(map)")
            #expect(reused == oracle, "record \(index): \(map)")
            if oracle.hasPrefix("[") { read += 1 }
        }
        #expect(read > 1_000 && read < 3_900, "\(read) of 4,000 records read")
    }
}
