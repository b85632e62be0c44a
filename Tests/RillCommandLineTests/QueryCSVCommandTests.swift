import Foundation
import RillTestSupport
import RillWorkloads
import Testing

@testable import Rill

/// A model whose fields CSV must quote, escape or leave empty: text with commas, quotes, CR, LF
/// and unicode, empty strings, nils, nested values, arrays and numbers at their extremes.
struct Sheet: PersistentModel {
    struct Inner: Codable, Sendable {
        var label: String
        var values: [Double]
    }

    var id: Int
    var text: String
    var note: String?
    var amount: Double
    var count: Int64
    var big: UInt64
    var flag: Bool
    var when: Date
    var tags: [String]
    var inner: Inner?
    var counts: [String: Int]
}

/// `rill query --csv`, as a real process, read back by a CSV parser of the test's own and
/// compared with the same query's `--json` records.
@Suite struct QueryCSVCommandTests {
    let directory = TemporaryDirectory()

    func rill(_ arguments: [String]) throws -> ProcessRun { try runBuilt("rill", arguments) }

    // MARK: - A parser of RFC 4180

    /// One field as read: its text, and whether it was quoted (`""` is an empty string, an empty
    /// unquoted field a null).
    struct Field: Equatable, CustomStringConvertible {
        var text: String
        var quoted: Bool
        var description: String { quoted ? "\"\(text)\"" : text }
    }

    struct MalformedCSV: Error, CustomStringConvertible {
        var description: String
    }

    /// The rows of `csv`, which must be RFC 4180 with CRLF line ends, the last line ended too.
    static func parse(_ csv: String) throws -> [[Field]] {
        let scalars = Array(csv.unicodeScalars)
        var rows: [[Field]] = []
        var row: [Field] = []
        var index = 0
        guard !scalars.isEmpty else { return [] }
        while true {
            // A field starts here.
            var text = String.UnicodeScalarView()
            var quoted = false
            if index < scalars.count, scalars[index] == "\"" {
                quoted = true
                index += 1
                while true {
                    guard index < scalars.count else { throw MalformedCSV(description: "unterminated quote") }
                    let scalar = scalars[index]
                    index += 1
                    if scalar == "\"" {
                        guard index < scalars.count, scalars[index] == "\"" else { break }
                        index += 1
                    }
                    text.append(scalar)
                }
            } else {
                while index < scalars.count, scalars[index] != ",", scalars[index] != "\r" {
                    let scalar = scalars[index]
                    guard scalar != "\"", scalar != "\n" else {
                        throw MalformedCSV(description: "bare \(scalar.escaped(asASCII: true)) at \(index)")
                    }
                    text.append(scalar)
                    index += 1
                }
            }
            row.append(Field(text: String(text), quoted: quoted))
            guard index < scalars.count else { throw MalformedCSV(description: "the last line has no line end") }
            if scalars[index] == "," {
                index += 1
                continue
            }
            guard scalars[index] == "\r", index + 1 < scalars.count, scalars[index + 1] == "\n" else {
                throw MalformedCSV(description: "expected a comma or CRLF at \(index)")
            }
            index += 2
            rows.append(row)
            row = []
            if index == scalars.count { return rows }
        }
    }

    // MARK: - Records

    static func sheets(using random: inout SeededGenerator) -> [Sheet] {
        let pieces = [
            ",", "\"", "\"\"", "\r", "\n", "\r\n", " ", "a", "é", "e\u{301}", "𝄞", "🦀", "\u{FEFF}", "\u{2028}", "\t",
            "\\", "nil", "null", "=1+2", "\u{1}",
        ]
        func text() -> String {
            (0..<Int.random(in: 0...8, using: &random)).map { _ in pieces.randomElement(using: &random)! }.joined()
        }
        let doubles: [Double] = [
            0, -0.0, 1.5, -.greatestFiniteMagnitude, .greatestFiniteMagnitude, .leastNonzeroMagnitude,
            .leastNormalMagnitude, .pi, 1e-300, .infinity, -.infinity, .nan,
        ]
        var sheets = [
            Sheet(
                id: 0, text: "", note: "", amount: .greatestFiniteMagnitude, count: .min, big: .max, flag: false,
                when: Date(timeIntervalSinceReferenceDate: -.greatestFiniteMagnitude), tags: [""],
                inner: Inner(label: "a,\"b\"\r\nc", values: [.leastNonzeroMagnitude, -0.0]), counts: ["": .min]),
            Sheet(
                id: 1, text: "\"", note: nil, amount: -0.0, count: .max, big: 0, flag: true,
                when: Date(timeIntervalSinceReferenceDate: 0.123456), tags: [], inner: nil, counts: [:]),
        ]
        for id in 2..<60 {
            sheets.append(
                Sheet(
                    id: id, text: text(), note: Bool.random(using: &random) ? text() : nil,
                    amount: Bool.random(using: &random)
                        ? doubles.randomElement(using: &random)!
                        : Double(bitPattern: .random(in: 0...UInt64.max, using: &random)),
                    count: .random(in: .min ... .max, using: &random), big: .random(in: 0...UInt64.max, using: &random),
                    flag: .random(using: &random),
                    when: Date(timeIntervalSinceReferenceDate: Double.random(in: -3e9...3e9, using: &random)),
                    tags: (0..<Int.random(in: 0...3, using: &random)).map { _ in text() },
                    inner: Bool.random(using: &random)
                        ? Sheet.Inner(label: text(), values: [doubles.randomElement(using: &random)!]) : nil,
                    counts: Bool.random(using: &random) ? [text(): .random(in: .min ... .max, using: &random)] : [:]))
        }
        return sheets
    }

    typealias Inner = Sheet.Inner

    // MARK: - Tests

    /// Every row parses back to the fields of the records `--json` prints, in the table's
    /// columns: strings as their text, nulls and missing fields empty and unquoted, the rest as
    /// their JSON.
    @Test func csvReadsBackAsTheQuerysRecords() throws {
        var random = SeededGenerator(label: "query csv")
        let path = directory.path("store")
        let container = try ModelContainer(
            for: Sheet.self, configurations: ModelConfiguration(url: URL(fileURLWithPath: path)))
        for sheet in Self.sheets(using: &random) { container.mainContext.insert(sheet) }
        try container.mainContext.save()

        for query in ["Sheet sort by id", "Sheet where flag == true sort by count desc limit 7", "Sheet where id < 0"] {
            let csv = try rill(["query", path, query, "--csv"])
            let json = try rill(["query", path, query, "--json"])
            #expect(csv.status == 0 && json.status == 0, "\(query): \(csv.error) \(json.error)")
            let records = try JSONReader.parseLines(Array(json.output.utf8))
            let rows = try Self.parse(csv.output)
            guard !records.isEmpty else {
                #expect(csv.output.isEmpty, "\(query): no records, no header: \(csv.output.debugDescription)")
                continue
            }
            var columns: [String] = []
            for case .map(let fields) in records {
                for field in fields where !columns.contains(field.name) { columns.append(field.name) }
            }
            try #require(rows.count == records.count + 1, "\(query): \(rows.count) rows for \(records.count) records")
            #expect(rows[0] == columns.map { Field(text: $0, quoted: false) }, "\(query): header")
            for (record, row) in zip(records, rows.dropFirst()) {
                guard case .map(let fields) = record else {
                    Issue.record("\(query): a record that is not a map")
                    continue
                }
                try #require(row.count == columns.count, "\(query): \(row)")
                for (column, field) in zip(columns, row) {
                    let value = fields.first(where: { $0.name == column })?.value ?? .null
                    switch value {
                    case .null:
                        #expect(field == Field(text: "", quoted: false), "\(query) \(column): \(field)")
                    case .string(let text):
                        #expect(field.text == text, "\(query) \(column): \(field) for \(text.debugDescription)")
                        if text.isEmpty { #expect(field.quoted, "\(query) \(column): an empty string is quoted") }
                    default:
                        #expect(
                            (try? JSONReader.parse(Array(field.text.utf8))) == value,
                            "\(query) \(column): \(field) for \(value.jsonString())")
                    }
                }
            }
        }
    }

    @Test func csvGoesWithNeitherJSONNorExplain() throws {
        let path = directory.path("store")
        let container = try ModelContainer(
            for: Sheet.self, configurations: ModelConfiguration(url: URL(fileURLWithPath: path)))
        _ = container
        for (words, message) in [
            (["--csv", "--json"], "--json and --csv"), (["--csv", "--explain"], "does not take --csv"),
        ] {
            let run = try rill(["query", path, "Sheet"] + words)
            #expect(run.status == 64 && run.error.contains(message), "\(words): \(run.error)")
            #expect(run.output.isEmpty)
        }
    }
}
