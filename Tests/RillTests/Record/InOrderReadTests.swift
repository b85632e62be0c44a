import Foundation
import RillWorkloads
import Testing

@testable import Rill

/// A record's own fields are read in stored order, each in one pass (`RecordDecoder.nextField`),
/// both through `Decodable` and through a model's `init(record:)`; whatever that pass does not
/// take (another order, another stored kind, a key left out, a damaged record) goes to the general
/// read. Every way of reading must give what the general read gives: the same values, or a failure
/// of the same kind at the same field.
///
/// The oracle is the general read itself: a nested map, which is always scanned first and read
/// by key (`Wrapper`), and a model reading every field through the generic `decode(_:forKey:)`
/// (`Generic`), against the record's own map read through `Decodable` (`Fields`) and through the
/// typed overloads (`Typed`). Maps are random: the fields in their order or shuffled, keys left
/// out or added, nulls, and values of other kinds (integers where doubles are read, floats, 2^53 + 1,
/// integers out of range, strings where numbers are read).
@Suite struct InOrderReadTests {
    struct Fields: PersistentModel {
        static let entityName = "Fields"
        var id: Int
        var big: Int64
        var real: Double
        var text: String
        var flag: Bool
        var when: Date
        var uid: UUID
        var small: Int8
        var maybeInt: Int?
        var maybeReal: Double?
        var maybeText: String?
        var maybeFlag: Bool?
        var maybeWhen: Date?
        var maybeUID: UUID?
    }

    /// The same fields through the typed overloads of `ModelRecord`, in stored order.
    struct Typed: PersistentModel {
        static let entityName = "Fields"
        var fields: Fields
        var id: Int { fields.id }

        init(record: borrowing ModelRecord) throws {
            fields = Fields(
                id: try record.decode(forKey: "id"), big: try record.decode(forKey: "big"),
                real: try record.decode(forKey: "real"), text: try record.decode(forKey: "text"),
                flag: try record.decode(forKey: "flag"), when: try record.decode(forKey: "when"),
                uid: try record.decode(forKey: "uid"), small: try record.decode(forKey: "small"),
                maybeInt: try record.decodeIfPresent(forKey: "maybeInt"),
                maybeReal: try record.decodeIfPresent(forKey: "maybeReal"),
                maybeText: try record.decodeIfPresent(forKey: "maybeText"),
                maybeFlag: try record.decodeIfPresent(forKey: "maybeFlag"),
                maybeWhen: try record.decodeIfPresent(forKey: "maybeWhen"),
                maybeUID: try record.decodeIfPresent(forKey: "maybeUID"))
        }
    }

    /// The same fields, each through the generic `decode(_:forKey:)`, never a typed overload.
    struct Generic: PersistentModel {
        static let entityName = "Fields"
        var fields: Fields
        var id: Int { fields.id }

        static func read<T: Decodable>(_ record: borrowing ModelRecord, _ key: String) throws -> T {
            try record.decode(T.self, forKey: key)
        }

        static func readIfPresent<T: Decodable>(_ record: borrowing ModelRecord, _ key: String) throws -> T? {
            try record.decodeIfPresent(T.self, forKey: key)
        }

        init(record: borrowing ModelRecord) throws {
            fields = Fields(
                id: try Self.read(record, "id"), big: try Self.read(record, "big"), real: try Self.read(record, "real"),
                text: try Self.read(record, "text"), flag: try Self.read(record, "flag"),
                when: try Self.read(record, "when"), uid: try Self.read(record, "uid"),
                small: try Self.read(record, "small"), maybeInt: try Self.readIfPresent(record, "maybeInt"),
                maybeReal: try Self.readIfPresent(record, "maybeReal"),
                maybeText: try Self.readIfPresent(record, "maybeText"),
                maybeFlag: try Self.readIfPresent(record, "maybeFlag"),
                maybeWhen: try Self.readIfPresent(record, "maybeWhen"),
                maybeUID: try Self.readIfPresent(record, "maybeUID"))
        }
    }

    /// `Fields` one level down, where its map is scanned before any field is read.
    struct Wrapper: Decodable {
        var inner: Fields
    }

    static let names = [
        "id", "big", "real", "text", "flag", "when", "uid", "small",
        "maybeInt", "maybeReal", "maybeText", "maybeFlag", "maybeWhen", "maybeUID",
    ]

    /// A value for the field `name`: of its kind, or, when `odd` and one time in five, null,
    /// another kind, or out of range.
    static func value(for name: String, odd: Bool, _ random: inout SeededGenerator) -> RecordValue {
        let other: [RecordValue] = [
            .null, .bool(true), .int(-3), .uint(7), .uint(UInt64.max), .int(Int64.min), .float(1.5), .double(-0.0),
            .double(2.5), .string("x"), .string(""), .date(Date(timeIntervalSinceReferenceDate: 0)), .uuid(UUID()),
            .int(1 << 53 + 1), .int(1 << 53), .int(200), .array([]), .map([]), .url("https://x"),
        ]
        if odd, Int.random(in: 0..<5, using: &random) == 0 { return other.randomElement(using: &random)! }
        switch name {
        case "id", "maybeInt":
            return [.int(Int64.random(in: Int64.min...Int64.max, using: &random)), .int(0), .uint(5), .int(-1)]
                .randomElement(using: &random)!
        case "big": return .int(Int64.random(in: -1000...1000, using: &random))
        case "small": return .int(Int64.random(in: -200...200, using: &random))
        case "real", "maybeReal":
            return [
                .double(Double.random(in: -1e9...1e9, using: &random)), .double(.infinity),
                .double(-.greatestFiniteMagnitude), .double(.leastNonzeroMagnitude), .float(0.25), .int(42),
            ].randomElement(using: &random)!
        case "text", "maybeText":
            return .string(
                ["", "a", "Zoë", "ünïcode \u{1F600}", String(repeating: "long ", count: 9)]
                    .randomElement(using: &random)!)
        case "flag", "maybeFlag": return .bool(Bool.random(using: &random))
        case "when", "maybeWhen":
            return .date(Date(timeIntervalSinceReferenceDate: Double(Int32.random(in: .min ... .max, using: &random))))
        default: return .uuid(UUID())
        }
    }

    /// A map of the fields: in their order or shuffled, some left out (more often the optional
    /// ones), keys added between them.
    static func randomMap(_ random: inout SeededGenerator) -> [RecordField] {
        var fields: [RecordField] = []
        let leaveOut = Int.random(in: 0..<3, using: &random) == 0
        let odd = Bool.random(using: &random)
        for name in names {
            if leaveOut, Int.random(in: 0..<(name.hasPrefix("maybe") ? 3 : 30), using: &random) == 0 { continue }
            if Int.random(in: 0..<20, using: &random) == 0 {
                fields.append(RecordField(name: "extra\(fields.count)", value: .int(1)))
            }
            fields.append(RecordField(name: name, value: value(for: name, odd: odd, &random)))
        }
        if Int.random(in: 0..<6, using: &random) == 0 { fields.shuffle(using: &random) }
        return fields
    }

    /// The field a failure names, and its kind.
    static func failure(_ error: any Error) -> String {
        guard let error = error as? DecodingError else { return "\(type(of: error))" }
        switch error {
        case .keyNotFound(let key, _): return "keyNotFound \(key.stringValue)"
        case .typeMismatch(_, let context): return "typeMismatch \(context.codingPath.last?.stringValue ?? "")"
        case .valueNotFound(_, let context): return "valueNotFound \(context.codingPath.last?.stringValue ?? "")"
        case .dataCorrupted(let context): return "dataCorrupted \(context.codingPath.last?.stringValue ?? "")"
        @unknown default: return "\(error)"
        }
    }

    /// What a read gave: the fields encoded again (so that values compare bit for bit), or its
    /// failure.
    static func outcome(_ read: () throws -> Fields) -> String {
        do {
            return "\(try RecordCoder.encode(read()))"
        } catch {
            return failure(error)
        }
    }

    @Test func everyReadGivesWhatTheGeneralReadGives() throws {
        var random = SeededGenerator(label: "in-order reads")
        var spareTyped: RecordDecoder?
        var spareDecoded: RecordDecoder?
        var read = 0
        var kinds = Set<String>()
        for index in 0..<4_000 {
            let map = Self.randomMap(&random)
            let bytes = RecordValue.map(map).recordBytes()
            let wrapped = RecordValue.map([RecordField(name: "inner", value: .map(map))]).recordBytes()
            let oracle = Self.outcome { try RecordCoder.decode(Wrapper.self, from: wrapped).inner }
            let generic = Self.outcome { try RecordCoder.decodeModel(Generic.self, from: bytes).fields }
            let decoded = Self.outcome {
                try bytes.withUnsafeBytes { try RecordCoder.decode(Fields.self, from: $0, reusing: &spareDecoded) }
            }
            let typed = Self.outcome {
                try bytes.withUnsafeBytes { try RecordCoder.decodeModel(Typed.self, from: $0, reusing: &spareTyped) }
                    .fields
            }
            #expect(generic == oracle, "record \(index): \(map)")
            #expect(decoded == oracle, "record \(index): \(map)")
            #expect(typed == oracle, "record \(index): \(map)")
            if oracle.hasPrefix("[") { read += 1 } else { kinds.insert(String(oracle.prefix { $0 != " " })) }
        }
        // Both outcomes are common, and the failures of every kind a field's value can give.
        #expect(read > 400 && read < 3_600, "\(read) of 4,000 records read")
        #expect(kinds == ["keyNotFound", "typeMismatch", "valueNotFound", "dataCorrupted"], "\(kinds)")
    }

    /// Damaged records (a byte changed, cut off or put in): each way of reading the record's own
    /// map reads the same values, or fails, where the generic read does. (Of several problems, a
    /// read in order may report another than a scan would, so only the outcome is compared.)
    @Test func damagedRecordsFailWhereTheGeneralReadFails() throws {
        var random = SeededGenerator(label: "damaged in-order reads")
        var failures = 0
        for index in 0..<4_000 {
            var bytes = RecordValue.map(Self.randomMap(&random)).recordBytes()
            switch Int.random(in: 0..<3, using: &random) {
            case 0: bytes[Int.random(in: 0..<bytes.count, using: &random)] = UInt8.random(in: 0...255, using: &random)
            case 1: bytes.removeLast(Int.random(in: 1...bytes.count, using: &random))
            default:
                bytes.insert(
                    UInt8.random(in: 0...255, using: &random), at: Int.random(in: 0...bytes.count, using: &random))
            }
            let generic = Self.outcome { try RecordCoder.decodeModel(Generic.self, from: bytes).fields }
            let decoded = Self.outcome { try RecordCoder.decode(Fields.self, from: bytes) }
            let typed = Self.outcome { try RecordCoder.decodeModel(Typed.self, from: bytes).fields }
            let reads = [generic, decoded, typed].map { $0.hasPrefix("[") ? $0 : "failed" }
            #expect(reads[1] == reads[0] && reads[2] == reads[0], "record \(index): \(bytes)")
            if reads[0] == "failed" { failures += 1 }
        }
        #expect(failures > 1_000 && failures < 4_000)
    }
}
