import Foundation
import RillTestSupport
import RillWorkloads
import Testing

@testable import Rill

/// A query's run parses its records with the key names of the first (`RecordKeyNames`): every
/// record must parse to what it parses to alone, or fail the same way, whatever keys it shares
/// with the first: random records whose keys are those of the first, others, longer than 16
/// bytes, not ASCII, in another order, fewer or more, and keys that are not UTF-8.
@Suite struct RecordKeyNamesTests {
    static let keys = [
        "id", "code", "category", "amount", "name", "createdAt", "a", "", "sixteen_bytes_ab", "seventeen_bytes_a",
        "a much longer key than sixteen bytes", "clé", "名前", "Id", "code ",
    ]

    static func randomRecord(using generator: inout SeededGenerator) -> RecordValue {
        let count = Int.random(in: 0...7, using: &generator)
        var fields: [RecordField] = []
        for _ in 0..<count {
            let value: RecordValue =
                switch Int.random(in: 0..<4, using: &generator) {
                case 0: .int(Int64.random(in: -1_000...1_000, using: &generator))
                case 1: .string(Self.keys.randomElement(using: &generator)!)
                case 2: .map([RecordField(name: Self.keys.randomElement(using: &generator)!, value: .null)])
                default: .double(Double.random(in: -1...1, using: &generator))
                }
            fields.append(RecordField(name: Self.keys.randomElement(using: &generator)!, value: value))
        }
        return .map(fields)
    }

    /// The record's bytes, with the UTF-8 of one key broken now and then.
    static func bytes(of record: RecordValue, using generator: inout SeededGenerator) -> [UInt8] {
        var bytes = record.recordBytes()
        if Int.random(in: 0..<10, using: &generator) == 0, case .map(let fields) = record,
            let field = fields.first(where: { !$0.name.isEmpty })
        {
            // The key's first byte, after its tag and one-byte length (keys here are short).
            let name = Array(field.name.utf8)
            if let at = bytes.firstRange(of: [RecordFormat.Tag.string, UInt8(name.count)] + name)?.lowerBound {
                bytes[at + 2] = 0xFF
            }
        }
        return bytes
    }

    static func parse(_ bytes: [UInt8], names: RecordKeyNames?) -> Result<RecordValue, RecordError> {
        bytes.withUnsafeBytes { raw in
            do {
                return .success(try RecordValue(record: raw, names: names))
            } catch let error as RecordError {
                return .failure(error)
            } catch {
                Issue.record("unexpected error \(error)")
                return .failure(RecordError(.invalidStructure, "unexpected", offset: 0))
            }
        }
    }

    @Test func recordsParseWithTheFirstRecordsNamesAsAlone() throws {
        var generator = SeededGenerator(label: "record key names")
        for _ in 0..<300 {
            let first = Self.randomRecord(using: &generator)
            let names = try #require(RecordKeyNames(of: first))
            for _ in 0..<20 {
                var record = Self.randomRecord(using: &generator)
                if Bool.random(using: &generator), case .map(var fields) = first {
                    // Mostly the first record's keys, a value or a key changed now and then.
                    for index in fields.indices where Int.random(in: 0..<4, using: &generator) == 0 {
                        fields[index].value = .int(Int64(index))
                    }
                    if !fields.isEmpty, Bool.random(using: &generator) {
                        fields[Int.random(in: 0..<fields.count, using: &generator)].name =
                            Self.keys.randomElement(using: &generator)!
                    }
                    if Bool.random(using: &generator) { fields.append(RecordField(name: "extra", value: .null)) }
                    record = .map(fields)
                }
                let bytes = Self.bytes(of: record, using: &generator)
                let alone = Self.parse(bytes, names: nil)
                let named = Self.parse(bytes, names: names)
                switch (alone, named) {
                case (.success(let a), .success(let b)): #expect(a == b, "\(bytes)")
                case (.failure(let a), .failure(let b)): #expect("\(a)" == "\(b)", "\(bytes)")
                default: Issue.record("\(bytes): \(alone) alone, \(named) with the first record's names")
                }
            }
        }
    }

    @Test func aRecordThatIsNotAMapHasNoNames() {
        #expect(RecordKeyNames(of: .int(1)) == nil)
        #expect(RecordKeyNames(of: .array([.map([])])) == nil)
    }
}

/// The key names of an entity's last text query serve the next query's records: records of two
/// shapes, queried one after the other, each read as it reads alone.
@Suite struct RecordKeyNamesAcrossQueriesTests {
    let directory = TemporaryDirectory()

    struct Short: PersistentModel {
        static let entityName = "Shape"
        var id: Int
        var name: String
        var size: Int
    }

    struct Long: PersistentModel {
        static let entityName = "Shape"
        var id: Int
        var size: Int
        var name: String
        var aFieldNamedBeyondSixteenBytes: String
        var note: String?
    }

    @Test func queriesAfterQueriesOfOtherShapesReadEveryRecordAsAlone() throws {
        var random = SeededGenerator(label: "key names across queries")
        let url = directory.url.appendingPathComponent("store")
        let short = try ModelContainer(for: Short.self, configurations: ModelConfiguration(url: url))
        let long = try ModelContainer(for: Long.self, configurations: ModelConfiguration(url: url))
        for id in 0..<60 {
            if Bool.random(using: &random) {
                short.mainContext.insert(Short(id: id, name: "s\(id)", size: id % 7))
                try short.mainContext.save()
            } else {
                long.mainContext.insert(
                    Long(id: id, size: id % 7, name: "l\(id)", aFieldNamedBeyondSixteenBytes: "x", note: nil))
                try long.mainContext.save()
            }
        }
        let store = short.store
        let entity = try store.existingEntity("Shape")
        for _ in 0..<40 {
            let query =
                Bool.random(using: &random)
                ? "Shape where id == \(Int.random(in: 0..<60, using: &random))"
                : "Shape where size == \(Int.random(in: 0..<7, using: &random)) sort by id desc"
            for row in try store.run(QueryParser.parse(query)) {
                let bytes = try #require(try store.record(of: entity, key: row.key))
                #expect(row.record == (try bytes.withUnsafeBytes { try RecordValue(record: $0) }), "\(query)")
            }
        }
    }
}
