import Foundation
import RillTestSupport
import RillWorkloads
import Testing

@testable import Rill

/// A model with every kind Rill stores, for round trips through JSON.
struct Extremes: PersistentModel {
    struct Inner: Codable, Sendable {
        var when: Date
        var amount: Decimal
        var note: String?
        var values: [Double]
        var small: Float
    }

    var id: String
    var int: Int
    var int8: Int8
    var int16: Int16
    var int32: Int32
    var int64: Int64
    var uint: UInt
    var uint8: UInt8
    var uint16: UInt16
    var uint32: UInt32
    var uint64: UInt64
    var double: Double
    var float: Float
    var decimal: Decimal
    var date: Date
    var uuid: UUID
    var string: String
    var data: Data
    var bool: Bool
    var url: URL
    var optionalDate: Date?
    var inner: Inner
    var maybeInner: Inner?
    var history: [Inner]
    var dates: [Date]
    var decimals: [Decimal]
    var counts: [String: Int]
}

/// Every stored kind, at its extremes, keeps every digit through JSON: `rill export` then `rill import`, `rill get`
/// and `rill query --json` then `rill insert`; and a store built through the command line alone, from a description
/// and JSON records, reads back as the model types it describes.
@Suite struct JSONRoundTripTests {
    let directory = TemporaryDirectory()

    func rill(_ arguments: [String], input: String? = nil) throws -> ProcessRun {
        try runBuilt("rill", arguments, input: input)
    }

    // MARK: - Values

    static func inner(
        _ seconds: Double, _ amount: String, note: String?, values: [Double], small: Float
    ) -> Extremes.Inner {
        Extremes.Inner(
            when: Date(timeIntervalSinceReferenceDate: seconds), amount: Decimal(string: amount)!, note: note,
            values: values, small: small)
    }

    /// Records at the extremes of every kind, then random ones.
    static func records(using random: inout SeededGenerator) -> [Extremes] {
        let unicode = "\u{0}\u{1}\u{1F}\u{7F} \"quoted\" back\\slash é e\u{301} 𝄞 🦀 \u{FEFF}\u{2028}"
        var records = [
            Extremes(
                id: "min", int: .min, int8: .min, int16: .min, int32: .min, int64: .min, uint: .min, uint8: .min,
                uint16: .min, uint32: .min, uint64: .min, double: -.greatestFiniteMagnitude,
                float: -.greatestFiniteMagnitude, decimal: .leastFiniteMagnitude,
                date: Date(timeIntervalSinceReferenceDate: -.greatestFiniteMagnitude), uuid: UUID(), string: "",
                data: Data(), bool: false, url: URL(string: "https://example.com/")!, optionalDate: nil,
                inner: inner(0, "0", note: nil, values: [], small: 0), maybeInner: nil, history: [], dates: [],
                decimals: [], counts: [:]),
            Extremes(
                id: "max", int: .max, int8: .max, int16: .max, int32: .max, int64: .max, uint: .max, uint8: .max,
                uint16: .max, uint32: .max, uint64: .max, double: .greatestFiniteMagnitude,
                float: .greatestFiniteMagnitude, decimal: .greatestFiniteMagnitude,
                date: Date(timeIntervalSinceReferenceDate: .greatestFiniteMagnitude), uuid: UUID(), string: unicode,
                data: Data(0...255), bool: true, url: URL(string: "https://example.com/a%20b?c=d&e=%C3%A9#f")!,
                optionalDate: Date(timeIntervalSinceReferenceDate: 1e15),
                inner: inner(
                    -1e15, "-99999999999999999999999999999999999999", note: unicode, values: [1, -1], small: 1),
                maybeInner: inner(
                    1e-300, "0.00000000000000000000000000000000000001", note: "", values: [], small: -0.0),
                history: [inner(0.5, "1", note: nil, values: [.pi], small: .pi)],
                dates: [Date.distantPast, Date.distantFuture], decimals: [Decimal.greatestFiniteMagnitude],
                counts: ["a": .max, "": .min, "é": 0]),
            Extremes(
                id: "tiny", int: 0, int8: -1, int16: 1, int32: -1, int64: 1, uint: 1, uint8: 1, uint16: 1, uint32: 1,
                uint64: UInt64(Int64.max) + 1, double: .leastNonzeroMagnitude, float: .leastNonzeroMagnitude,
                decimal: .leastNonzeroMagnitude, date: Date(timeIntervalSinceReferenceDate: .leastNonzeroMagnitude),
                uuid: UUID(), string: "0", data: Data([0]), bool: true, url: URL(string: "file:///tmp/x")!,
                optionalDate: Date(timeIntervalSinceReferenceDate: -.leastNonzeroMagnitude),
                inner: inner(
                    0.123456789, "12345678901234567890.123456789", note: nil, values: [-0.0],
                    small: .leastNonzeroMagnitude),
                maybeInner: inner(
                    -0.000_000_1, "-0.0000000000000000000000000000000000001", note: nil,
                    values: [.leastNormalMagnitude, -.leastNonzeroMagnitude], small: .leastNormalMagnitude),
                history: [], dates: [Date(timeIntervalSinceReferenceDate: 0.123456)],
                decimals: [Decimal(string: "12345678901234567890.123456789")!, Decimal(string: "-1e-100")!],
                counts: [:]),
            Extremes(
                id: "nonfinite", int: 1, int8: 0, int16: 0, int32: 0, int64: 0, uint: 0, uint8: 0, uint16: 0,
                uint32: 0, uint64: 0, double: .nan, float: -.infinity, decimal: .nan,
                date: Date(timeIntervalSinceReferenceDate: .infinity), uuid: UUID(), string: "NaN", data: Data(),
                bool: false, url: URL(string: "https://example.com/")!,
                optionalDate: Date(timeIntervalSinceReferenceDate: -.infinity),
                inner: inner(-0.0, "-0.001", note: nil, values: [.infinity, -.infinity, .nan], small: .nan),
                maybeInner: nil, history: [], dates: [Date(timeIntervalSinceReferenceDate: .nan)], decimals: [.nan],
                counts: [:]),
        ]
        for index in 0..<40 {
            func finite(_ bits: UInt64) -> Double {
                let value = Double(bitPattern: bits)
                return value.isFinite ? value : Double(bitPattern: bits >> 12)
            }
            func decimal() -> Decimal {
                let digits =
                    String(UInt64.random(in: 0...UInt64.max, using: &random))
                    + String(UInt64.random(in: 0...UInt64.max, using: &random))
                let text = String(digits.prefix(Int.random(in: 1...38, using: &random)))
                return Decimal(
                    string: (Bool.random(using: &random) ? "-" : "") + text + "e"
                        + String(Int.random(in: -100...80, using: &random)))!
            }
            func date() -> Date {
                Date(timeIntervalSinceReferenceDate: finite(UInt64.random(in: 0...UInt64.max, using: &random)))
            }
            func near() -> Date {
                // Dates of these centuries, to the last bit of their fraction.
                Date(timeIntervalSinceReferenceDate: Double.random(in: -3e9...3e9, using: &random))
            }
            records.append(
                Extremes(
                    id: "random\(index)", int: .random(in: .min ... .max, using: &random),
                    int8: .random(in: .min ... .max, using: &random), int16: .random(in: .min ... .max, using: &random),
                    int32: .random(in: .min ... .max, using: &random),
                    int64: .random(in: .min ... .max, using: &random),
                    uint: .random(in: .min ... .max, using: &random), uint8: .random(in: .min ... .max, using: &random),
                    uint16: .random(in: .min ... .max, using: &random),
                    uint32: .random(in: .min ... .max, using: &random),
                    uint64: .random(in: .min ... .max, using: &random),
                    double: Double(bitPattern: .random(in: 0...UInt64.max, using: &random)),
                    float: Float(bitPattern: .random(in: 0...UInt32.max, using: &random)), decimal: decimal(),
                    date: index.isMultiple(of: 2) ? date() : near(), uuid: UUID(),
                    string: String(
                        (0..<Int.random(in: 0...12, using: &random)).map { _ in unicode.randomElement(using: &random)! }
                    ),
                    data: Data(
                        (0..<Int.random(in: 0...20, using: &random)).map { _ in
                            UInt8.random(in: 0...255, using: &random)
                        }),
                    bool: .random(using: &random), url: URL(string: "https://example.com/\(index)")!,
                    optionalDate: Bool.random(using: &random) ? near() : nil,
                    inner: Extremes.Inner(
                        when: near(), amount: decimal(), note: nil,
                        values: [finite(.random(in: 0...UInt64.max, using: &random))],
                        small: Float(bitPattern: .random(in: 0...UInt32.max, using: &random))),
                    maybeInner: nil, history: [], dates: [date(), near()], decimals: [decimal()],
                    counts: ["n": index]))
        }
        return records
    }

    // MARK: - Comparing

    /// The fields in which `actual` differs from `expected`: floating-point fields by bit pattern (so -0.0 is not
    /// 0.0) with any NaN matching any NaN, dates as `Date` compares them (any NaN matching any NaN), the rest by `==`.
    static func differences(_ expected: Extremes, _ actual: Extremes) -> [String] {
        func same<F: BinaryFloatingPoint>(_ a: F, _ b: F) -> Bool {
            (a.isNaN && b.isNaN) || (a == b && a.sign == b.sign)
        }
        func same(_ a: Date, _ b: Date) -> Bool {
            a == b || (a.timeIntervalSinceReferenceDate.isNaN && b.timeIntervalSinceReferenceDate.isNaN)
        }
        func same(_ a: Decimal, _ b: Decimal) -> Bool { a == b || (a.isNaN && b.isNaN) }
        func same(_ a: Extremes.Inner?, _ b: Extremes.Inner?) -> Bool {
            guard let a, let b else { return a == nil && b == nil }
            return same(a.when, b.when) && same(a.amount, b.amount) && a.note == b.note
                && a.values.count == b.values.count && zip(a.values, b.values).allSatisfy { same($0, $1) }
                && same(a.small, b.small)
        }
        let checks: [(String, Bool)] = [
            ("id", expected.id == actual.id), ("int", expected.int == actual.int),
            ("int8", expected.int8 == actual.int8), ("int16", expected.int16 == actual.int16),
            ("int32", expected.int32 == actual.int32), ("int64", expected.int64 == actual.int64),
            ("uint", expected.uint == actual.uint), ("uint8", expected.uint8 == actual.uint8),
            ("uint16", expected.uint16 == actual.uint16), ("uint32", expected.uint32 == actual.uint32),
            ("uint64", expected.uint64 == actual.uint64), ("double", same(expected.double, actual.double)),
            ("float", same(expected.float, actual.float)), ("decimal", same(expected.decimal, actual.decimal)),
            ("date", same(expected.date, actual.date)), ("uuid", expected.uuid == actual.uuid),
            ("string", expected.string == actual.string), ("data", expected.data == actual.data),
            ("bool", expected.bool == actual.bool), ("url", expected.url == actual.url),
            (
                "optionalDate",
                expected.optionalDate.map { a in actual.optionalDate.map { same(a, $0) } ?? false }
                    ?? (actual.optionalDate == nil)
            ),
            ("inner", same(expected.inner, actual.inner)), ("maybeInner", same(expected.maybeInner, actual.maybeInner)),
            (
                "history",
                expected.history.count == actual.history.count
                    && zip(expected.history, actual.history).allSatisfy { same($0, $1) }
            ),
            (
                "dates",
                expected.dates.count == actual.dates.count
                    && zip(expected.dates, actual.dates).allSatisfy { same($0, $1) }
            ),
            (
                "decimals",
                expected.decimals.count == actual.decimals.count
                    && zip(expected.decimals, actual.decimals).allSatisfy { same($0, $1) }
            ),
            ("counts", expected.counts == actual.counts),
        ]
        return checks.filter { !$0.1 }.map(\.0)
    }

    /// Opens `path` with the model type and compares every record with `expected`, field by field.
    func expectStore(_ path: String, holds expected: [Extremes], _ label: String) throws {
        let container = try ModelContainer(
            for: Extremes.self, configurations: ModelConfiguration(url: URL(fileURLWithPath: path)))
        let fetched = try container.mainContext.fetch(FetchDescriptor<Extremes>())
        let byID = Dictionary(uniqueKeysWithValues: fetched.map { ($0.id, $0) })
        #expect(fetched.count == expected.count, "\(label)")
        for record in expected {
            guard let actual = byID[record.id] else {
                Issue.record("\(label): \(record.id) is missing")
                continue
            }
            let differing = Self.differences(record, actual)
            #expect(differing.isEmpty, "\(label): \(record.id) differs in \(differing): \(record) → \(actual)")
        }
    }

    func modelStore(_ name: String, _ records: [Extremes]) throws -> String {
        let path = directory.path(name)
        let container = try ModelContainer(
            for: Extremes.self, configurations: ModelConfiguration(url: URL(fileURLWithPath: path)))
        for record in records { container.mainContext.insert(record) }
        try container.mainContext.save()
        return path
    }

    // MARK: - Tests

    @Test func everyKindAtItsExtremesSurvivesExportAndImport() throws {
        var random = SeededGenerator(label: "JSON extremes export")
        let records = Self.records(using: &random)
        let source = try modelStore("source", records)
        let export = try rill(["export", source])
        #expect(export.status == 0, "\(export.error)")
        let copy = directory.path("copy")
        let imported = try rill(["import", copy], input: export.output)
        #expect(imported.status == 0, "\(imported.error)")
        try expectStore(copy, holds: records, "export → import")
        // The copy exports exactly as the original did.
        let again = try rill(["export", copy])
        #expect(again.output == export.output)
    }

    @Test func aFieldOnlyLaterRecordsHaveSurvivesExportAndImport() throws {
        var random = SeededGenerator(label: "JSON late field")
        let template = Self.records(using: &random)[4]
        // The description of an export covers every record, not only the first few a write looks at.
        let records = (0..<80).map { index in
            var record = template
            record.id = "r" + String(index + 100)
            record.optionalDate = index == 79 ? Date(timeIntervalSinceReferenceDate: 0.25) : nil
            record.maybeInner = index == 79 ? template.inner : nil
            return record
        }
        let source = try modelStore("source", records)
        let export = try rill(["export", source])
        let copy = directory.path("copy")
        let imported = try rill(["import", copy], input: export.output)
        #expect(imported.status == 0, "\(imported.error)")
        try expectStore(copy, holds: records, "export → import")
        // The optional fields only the last record has keep their places in it: the copy exports
        // exactly as the original did.
        #expect(try rill(["export", copy]).output == export.output)
    }

    /// Values `Codable` stores as arrays whose elements alternate kinds: a dictionary keyed by UUIDs or
    /// by an enum (key, value, key, value, …) and a pair in an unkeyed container.
    struct Tallies: PersistentModel, Equatable {
        enum Side: String, Codable, Sendable { case left, right }
        struct Pair: Codable, Sendable, Equatable {
            var count: Int
            var label: String
            init(count: Int, label: String) { (self.count, self.label) = (count, label) }
            init(from decoder: any Decoder) throws {
                var container = try decoder.unkeyedContainer()
                (count, label) = (try container.decode(Int.self), try container.decode(String.self))
            }
            func encode(to encoder: any Encoder) throws {
                var container = encoder.unkeyedContainer()
                try container.encode(count)
                try container.encode(label)
            }
        }
        var id: Int
        var byUUID: [UUID: Int]
        var bySide: [Side: Date]
        var pair: Pair
    }

    @Test func arraysOfAlternatingKindsSurviveExportAndImport() throws {
        let source = directory.path("source")
        let records = [
            Tallies(
                id: 1, byUUID: [UUID(): 3, UUID(): -4], bySide: [.left: Date(timeIntervalSince1970: 1.5)],
                pair: .init(count: 7, label: "seven")),
            Tallies(id: 2, byUUID: [:], bySide: [:], pair: .init(count: 0, label: "")),
        ]
        do {
            let container = try ModelContainer(
                for: Tallies.self, configurations: ModelConfiguration(url: URL(fileURLWithPath: source)))
            for record in records { container.mainContext.insert(record) }
            try container.mainContext.save()
        }
        let export = try rill(["export", source])
        #expect(export.status == 0, "\(export.error)")
        #expect(export.output.contains(#""byUUID":["uuid","int"],"bySide":["string","date"],"pair":["any"]"#))
        let copy = directory.path("copy")
        let imported = try rill(["import", copy], input: export.output)
        #expect(imported.status == 0, "\(imported.error)")
        let container = try ModelContainer(
            for: Tallies.self, configurations: ModelConfiguration(url: URL(fileURLWithPath: copy)))
        #expect(try container.mainContext.fetch(FetchDescriptor<Tallies>(sortBy: [SortDescriptor(\.id)])) == records)
        #expect(try rill(["export", copy]).output == export.output)
        #expect(try rill(["schema", copy, "Tallies"]).output.contains("[uuid, int]"))
    }

    /// A model that writes a nil as an explicit null and reads it with `decodeNil(forKey:)`, as JSONDecoder
    /// reads what JSONEncoder wrote of it.
    struct ExplicitNull: PersistentModel, Equatable {
        var id: Int
        var note: String?
        enum CodingKeys: String, CodingKey { case id, note }
        init(id: Int, note: String?) { (self.id, self.note) = (id, note) }
        init(from decoder: any Decoder) throws {
            let container = try decoder.container(keyedBy: CodingKeys.self)
            id = try container.decode(Int.self, forKey: .id)
            note = try container.decodeNil(forKey: .note) ? nil : try container.decode(String.self, forKey: .note)
        }
        func encode(to encoder: any Encoder) throws {
            var container = encoder.container(keyedBy: CodingKeys.self)
            try container.encode(id, forKey: .id)
            if let note { try container.encode(note, forKey: .note) } else { try container.encodeNil(forKey: .note) }
        }
    }

    @Test func nullFieldsOfStoredRecordsSurviveExportAndImport() throws {
        let source = directory.path("source")
        let records = [ExplicitNull(id: 1, note: nil), ExplicitNull(id: 2, note: "two")]
        do {
            let container = try ModelContainer(
                for: ExplicitNull.self, configurations: ModelConfiguration(url: URL(fileURLWithPath: source)))
            for record in records { container.mainContext.insert(record) }
            try container.mainContext.save()
        }
        let export = try rill(["export", source])
        #expect(export.output.contains(#"{"id":1,"note":null}"#), "\(export.output)")
        let copy = directory.path("copy")
        let imported = try rill(["import", copy], input: export.output)
        #expect(imported.status == 0, "\(imported.error)")
        let container = try ModelContainer(
            for: ExplicitNull.self, configurations: ModelConfiguration(url: URL(fileURLWithPath: copy)))
        let fetched = try container.mainContext.fetch(FetchDescriptor<ExplicitNull>(sortBy: [SortDescriptor(\.id)]))
        #expect(fetched == records)
        #expect(try rill(["export", copy]).output == export.output)
    }

    @Test func everyKindAtItsExtremesSurvivesGetQueryAndInsert() throws {
        var random = SeededGenerator(label: "JSON extremes insert")
        let records = Self.records(using: &random)
        let source = try modelStore("source", records)
        let description = try #require(try rill(["export", source]).output.split(separator: "\n").first)

        // `rill get`, then `rill insert` of what it printed, into a store that has only the description.
        let fromGet = directory.path("from-get")
        #expect(try rill(["import", fromGet], input: String(description)).status == 0)
        for record in records {
            let got = try rill(["get", source, "Extremes", record.id])
            #expect(got.status == 0, "\(got.error)")
            let inserted = try rill(["insert", fromGet, "Extremes", got.output.trimmingCharacters(in: .newlines)])
            #expect(inserted.status == 0, "\(record.id): \(inserted.error)")
        }
        try expectStore(fromGet, holds: records, "get → insert")

        // `rill query --json`, then its lines on the standard input of `rill insert`.
        let fromQuery = directory.path("from-query")
        #expect(try rill(["import", fromQuery], input: String(description)).status == 0)
        let queried = try rill(["query", "--json", source, "Extremes"])
        #expect(queried.status == 0, "\(queried.error)")
        let inserted = try rill(["insert", fromQuery, "Extremes"], input: queried.output)
        #expect(inserted.status == 0, "\(inserted.error)")
        try expectStore(fromQuery, holds: records, "query --json → insert")
    }

    @Test func aStoreBuiltThroughTheCommandLineReadsAsTheModel() throws {
        let path = directory.path("cli-only")
        // The description a user writes (or an export of another store gives): the kind of every field.
        let inner = #"{"when":"date","amount":"decimal","note":"string","values":["double"],"small":"float"}"#
        let description =
            #"{"entity":"Extremes","identifier":"String","indexes":["date"],"fields":{"id":"string","int":"int","#
            + #""int8":"int","int16":"int","int32":"int","int64":"int","uint":"uint","uint8":"uint","uint16":"uint","#
            + #""uint32":"uint","uint64":"uint","double":"double","float":"float","decimal":"decimal","date":"date","#
            + #""uuid":"uuid","string":"string","data":"data","bool":"bool","url":"url","optionalDate":"date","#
            + #""inner":\#(inner),"maybeInner":\#(inner),"history":[\#(inner)],"dates":["date"],"decimals":["decimal"],"#
            + #""counts":{}}}"#
        let declared = try rill(["import", path], input: description)
        #expect(declared.status == 0, "\(declared.error)")

        // Records as JSON gives them: integers for doubles, strings for dates (with offsets, many digits, a bare
        // day), decimals as numbers or strings, lowercase UUIDs, base64, nulls for optionals.
        let first =
            #"{"id":"a","int":-9223372036854775808,"int8":-128,"int16":32767,"int32":-2147483648,"#
            + #""int64":9223372036854775807,"uint":18446744073709551615,"uint8":255,"uint16":0,"uint32":4294967295,"#
            + #""uint64":9223372036854775808,"double":3,"float":0.1,"decimal":12345678901234567890.123456789,"#
            + #""date":"2020-01-01T00:00:00Z","uuid":"e621e1f8-c36c-495a-93fc-0c247a3e6e5f","string":"Dune","#
            + #""data":"AAH+/w==","bool":true,"url":"https://example.com/a?b=c","optionalDate":null,"#
            + #""inner":{"when":"2020-01-01T01:00:00.123456789+01:00","amount":"0.1","note":null,"values":[1,2.5],"#
            + #""small":1},"maybeInner":null,"history":[{"when":"2020-02-29","amount":7,"values":[],"small":-0.0}],"#
            + #""dates":["1969-12-31T23:59:59.9999999Z",0,1.5],"decimals":[1,"2.5",-1e-30],"counts":{"x":1}}"#
        let second =
            #"{"id":"b","int":0,"int8":0,"int16":0,"int32":0,"int64":0,"uint":0,"uint8":0,"uint16":0,"uint32":0,"#
            + #""uint64":0,"double":-0.0,"float":"-Infinity","decimal":"NaN","date":"-0044-03-15T12:00:00.5-00:30","#
            + #""uuid":"E621E1F8-C36C-495A-93FC-0C247A3E6E5F","string":"","data":"","bool":false,"#
            + #""url":"file:///tmp","optionalDate":"+10000-01-01T00:00:00Z","#
            + #""inner":{"when":"2001-01-01T00:00:00Z","amount":0,"values":["NaN"],"small":3.4028235e+38},"#
            + #""maybeInner":{"when":"2001-01-01T00:00:00.000001Z","amount":-5,"values":[],"small":0},"#
            + #""history":[],"dates":[],"decimals":[],"counts":{}}"#
        let inserted = try rill(["insert", path, "Extremes", first])
        #expect(inserted.status == 0, "\(inserted.error)")
        let piped = try rill(["insert", path, "Extremes"], input: second + "\n")
        #expect(piped.status == 0, "\(piped.error)")
        let updated = try rill([
            "update", path, "Extremes", #"{"id":"a","optionalDate":"1999-12-31T23:59:59.999999Z","double":2.5}"#,
        ])
        #expect(updated.status == 0, "\(updated.error)")

        func date(_ text: String) -> Date {
            let formatter = ISO8601DateFormatter()
            formatter.formatOptions = [.withInternetDateTime]
            return formatter.date(from: text)!
        }
        func decimal(_ text: String) -> Decimal { Decimal(string: text)! }
        let uuid = UUID(uuidString: "E621E1F8-C36C-495A-93FC-0C247A3E6E5F")!
        let expected = [
            Extremes(
                id: "a", int: .min, int8: .min, int16: .max, int32: .min, int64: .max, uint: .max, uint8: .max,
                uint16: 0, uint32: .max, uint64: 1 << 63, double: 2.5, float: 0.1,
                decimal: decimal("12345678901234567890.123456789"), date: date("2020-01-01T00:00:00Z"), uuid: uuid,
                string: "Dune", data: Data([0, 1, 0xFE, 0xFF]), bool: true,
                url: URL(string: "https://example.com/a?b=c")!,
                // 1999-12-31T23:59:59.999999Z: 31,622,400 s less 1 µs before 2001, rounded once.
                optionalDate: Date(timeIntervalSinceReferenceDate: Double("-31622400.000001")!),
                inner: Extremes.Inner(
                    when: Date(timeIntervalSinceReferenceDate: Double("599529600.123456789")!), amount: decimal("0.1"),
                    note: nil, values: [1, 2.5], small: 1),
                maybeInner: nil,
                history: [
                    Extremes.Inner(
                        when: date("2020-02-29T00:00:00Z"), amount: 7, note: nil, values: [], small: -0.0)
                ],
                dates: [
                    Date(timeIntervalSinceReferenceDate: Double("-978307200.0000001")!),
                    Date(timeIntervalSince1970: 0), Date(timeIntervalSinceReferenceDate: -978_307_198.5),
                ],
                decimals: [1, decimal("2.5"), decimal("-1e-30")], counts: ["x": 1]),
            Extremes(
                id: "b", int: 0, int8: 0, int16: 0, int32: 0, int64: 0, uint: 0, uint8: 0, uint16: 0, uint32: 0,
                uint64: 0, double: -0.0, float: -.infinity, decimal: .nan,
                // 44 BC, March 15, 12:30:00.5 UTC in the proleptic Gregorian calendar.
                date: Date(timeIntervalSinceReferenceDate: -64_527_622_200 + 0.5), uuid: uuid, string: "", data: Data(),
                bool: false, url: URL(string: "file:///tmp")!,
                optionalDate: Date(timeIntervalSinceReferenceDate: 252_423_993_600),
                inner: Extremes.Inner(
                    when: Date(timeIntervalSinceReferenceDate: 0), amount: 0, note: nil, values: [.nan],
                    small: .greatestFiniteMagnitude),
                maybeInner: Extremes.Inner(
                    when: Date(timeIntervalSinceReferenceDate: 0.000_001), amount: -5, note: nil, values: [], small: 0),
                history: [], dates: [], decimals: [], counts: [:]),
        ]
        try expectStore(path, holds: expected, "built through the command line")

        // Its export describes the declared kinds, and imports into a store the model reads the same.
        let export = try rill(["export", path])
        let header = try #require(export.output.split(separator: "\n").first)
        #expect(header.contains(#""date":"date""#) && header.contains(#""optionalDate":"date""#), "\(header)")
        let copy = directory.path("copy")
        #expect(try rill(["import", copy], input: export.output).status == 0)
        try expectStore(copy, holds: expected, "its export imported")
    }

    /// A model of a few kinds that JSON would round: for the daemon's writes and answers.
    struct Priced: PersistentModel, Equatable {
        var id: UUID
        var price: Decimal
        var published: Date
        var ratio: Double
        var sizes: [Float]
    }

    @Test func theDaemonWritesAndAnswersEveryDigit() throws {
        let path = directory.path("served")
        let description =
            #"{"entity":"Priced","identifier":"UUID","indexes":[],"#
            + #""fields":{"id":"uuid","price":"decimal","published":"date","ratio":"double","sizes":["float"]}}"#
        #expect(try rill(["import", path], input: description).status == 0)
        let daemon = try DaemonProcess(store: path, log: directory.path("serve.log"))
        let client = try HTTPTestClient(unix: daemon.socket)
        let record =
            #"{"id":"e621e1f8-c36c-495a-93fc-0c247a3e6e5f","price":12345678901234567890.123456789,"#
            + #""published":"2020-01-01T00:00:00.123456Z","ratio":3,"sizes":[0.1,16777217]}"#
        let saved = client.request(
            "POST", "/v1/save", body: #"[{"op":"insert","entity":"Priced","record":"# + record + "}]")
        #expect(saved?.status == 200, "\(saved?.body ?? "")")
        let answer = client.request("GET", "/v1/query?q=Priced")
        let expectedText =
            #"{"id":"E621E1F8-C36C-495A-93FC-0C247A3E6E5F","price":12345678901234567890.123456789,"#
            + #""published":"2020-01-01T00:00:00.123456Z","ratio":3.0,"sizes":[0.1,16777216.0]}"#
        #expect(answer?.body.contains(expectedText) == true, "\(answer?.body ?? "")")
        #expect(daemon.stop() == 0)

        let container = try ModelContainer(
            for: Priced.self, configurations: ModelConfiguration(url: URL(fileURLWithPath: path)))
        let fetched = try container.mainContext.fetch(FetchDescriptor<Priced>())
        let expected = Priced(
            id: UUID(uuidString: "E621E1F8-C36C-495A-93FC-0C247A3E6E5F")!,
            price: Decimal(string: "12345678901234567890.123456789")!,
            published: Date(timeIntervalSinceReferenceDate: Double("599529600.123456")!), ratio: 3,
            sizes: [Float("0.1")!, 16_777_216])
        #expect(fetched == [expected])
    }
}
