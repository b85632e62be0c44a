import Foundation
import RillTestSupport
import Testing

@testable import Rill
@testable import RillCommandLine

/// The tables of `rill query` and of a piped `rill watch`, as real processes, over values that
/// hold control characters, bidirectional controls and wide characters: nothing stored reaches
/// the terminal as a control, each is shown as its escape, and the columns line up in terminal
/// cells.
@Suite struct TableTextCommandTests {
    let directory = TemporaryDirectory()

    func rill(_ arguments: [String], input: String? = nil) throws -> ProcessRun {
        try runBuilt("rill", arguments, input: input)
    }

    /// The scalars a table must never print: C0 but the line ends, DEL, C1 and the bidirectional
    /// controls.
    static func steers(_ scalar: Unicode.Scalar) -> Bool {
        (scalar.value < 0x20 && scalar != "\n") || (0x7F...0x9F).contains(scalar.value)
            || scalar.properties.isBidiControl
    }

    /// A store whose `Item`s hold an SGR sequence, a bell, a CR, a tab, a C1 control, a
    /// right-to-left override, wide text and a combining mark.
    func makeStore() throws -> String {
        let path = directory.path("store")
        let created = try rill(["import", path], input: #"{"entity":"Item","identifier":"Int"}"# + "\n")
        #expect(created.status == 0, "\(created.error)")
        let inserted = try rill([
            "insert", path, "Item",
            #"{"id":9001,"name":"\u001b[31mRED\u001b[0m\u0007bell","s2":"a\rb\tc\u0085"}"#,
            #"{"id":9002,"name":"wide日本語日本語","s2":"\u202eevil"}"#,
            #"{"id":9003,"name":"cafe\u0301 👍","s2":"\u2066x\u2069"}"#,
        ])
        #expect(inserted.status == 0, "\(inserted.error)")
        return path
    }

    /// Where each column starts, in cells, read from the rule line under the header.
    static func columnStarts(_ rule: String) -> [Int] {
        var starts: [Int] = []
        var previous: Character = " "
        for (offset, character) in rule.enumerated() {
            if character == "─", previous == " " { starts.append(offset) }
            previous = character
        }
        return starts
    }

    /// The cell at which each of `values` starts in `line`, in order; nil for one not found there.
    static func cellOffsets(of values: [String], in line: String) -> [Int?] {
        var offsets: [Int?] = []
        var rest = Substring(line)
        var consumed = 0
        for value in values {
            guard let range = rest.range(of: value) else {
                offsets.append(nil)
                continue
            }
            let start = consumed + TerminalCells.width(of: rest[..<range.lowerBound])
            offsets.append(start)
            consumed = start + TerminalCells.width(of: rest[range])
            rest = rest[range.upperBound...]
        }
        return offsets
    }

    /// Checks a table (header, rule, rows) printed by the tool: no control reaches the output,
    /// the values show as escapes, and each value starts at its column's cell.
    static func expectSafeAndAligned(_ lines: [String], _ context: String) {
        for line in lines {
            #expect(!line.unicodeScalars.contains(where: steers), "\(context): a control is printed raw: \(line)")
        }
        guard let header = lines.firstIndex(where: { $0.contains("name") }), header + 1 < lines.count else {
            Issue.record("\(context): no table in \(lines)")
            return
        }
        let starts = columnStarts(lines[header + 1])
        #expect(starts.count == 3, "\(context): \(lines[header + 1])")
        let rows: [[String]] = [
            ["9001", #"\u{1B}[31mRED\u{1B}[0m\u{7}bell"#, #"a\u{D}b\u{9}c\u{85}"#],
            ["9002", "wide日本語日本語", #"\u{202E}evil"#],
            ["9003", "cafe\u{301} 👍", #"\u{2066}x\u{2069}"#],
        ]
        for values in rows {
            guard let line = lines.first(where: { $0.contains(values[1]) }) else {
                Issue.record("\(context): no row shows \(values[1]):\n\(lines.joined(separator: "\n"))")
                continue
            }
            let offsets = cellOffsets(of: values, in: line).map { $0.map { $0 - (starts.first ?? 0) } }
            let expected = starts.map { $0 - (starts.first ?? 0) }
            #expect(offsets == expected, "\(context): columns at \(offsets), not \(expected): \(line)")
        }
    }

    @Test func datesUUIDsAndDataAreShownAsTheirTextAsCSVHasThem() throws {
        let path = directory.path("kinds")
        let description =
            #"{"entity":"Event","identifier":"UUID","fields":{"when":"date","ref":"uuid","blob":"data","n":"double","tags":["string"]}}"#
        let record =
            #"{"op":"insert","entity":"Event","record":{"id":"E621E1F8-C36C-495A-93FC-0C247A3E6E5F","when":"2024-01-02T03:04:05Z","ref":"0A000000-0000-0000-0000-000000000001","blob":"AQI=","n":"NaN","tags":["x"]}}"#
        #expect(try rill(["import", path], input: description + "\n" + record + "\n").status == 0)
        let table = try rill(["query", path, "Event"])
        #expect(table.status == 0, "\(table.error)")
        let row = try #require(table.output.split(separator: "\n").dropFirst(2).first)
        let cells = row.split(separator: " ", omittingEmptySubsequences: true).map(String.init)
        #expect(
            cells == [
                "E621E1F8-C36C-495A-93FC-0C247A3E6E5F", "2024-01-02T03:04:05.000Z",
                "0A000000-0000-0000-0000-000000000001", "AQI=", "NaN", #"["x"]"#,
            ], "\(table.output)")
        let csv = try rill(["query", path, "Event", "--csv"])
        #expect(
            csv.output.split(separator: "\r\n").dropFirst().first.map(String.init)?.hasPrefix(
                cells.prefix(5).joined(separator: ",")) == true, "\(csv.output)")
    }

    @Test func aQueryTableShowsControlsAsEscapesAndLinesUpWideText() throws {
        let path = try makeStore()
        let run = try rill(["query", path, "Item where id > 9000 sort by id"])
        #expect(run.status == 0, "\(run.error)")
        let lines = run.output.components(separatedBy: "\n")
        Self.expectSafeAndAligned(lines, "rill query")
        #expect(lines.contains("(3 records)"))
    }

    @Test func aPipedWatchShowsControlsAsEscapesAndLinesUpWideText() throws {
        let path = try makeStore()
        let run = try rill(["watch", path, "Item sort by id", "--from", "0", "--to", "1"])
        #expect(run.status == 0, "\(run.error)")
        let lines = run.output.components(separatedBy: "\n")
        // The change of commit 1 lists the three inserted rows, each after its mark.
        let change = Array(lines.drop { !$0.hasPrefix("── commit 1") }.dropFirst())
        Self.expectSafeAndAligned(change, "rill watch")
        #expect(!run.output.unicodeScalars.contains(where: Self.steers))
    }

    @Test func aFieldNameIsShownAsSafelyAsAValue() throws {
        let table = RecordTable([.map([RecordField(name: "a\u{1B}]0;title\u{7}", value: .string("\u{200F}x"))])])
        let header = #"a\u{1B}]0;title\u{7}"#
        #expect(table.render() == [header, String(repeating: "─", count: header.count), #"\u{200F}x"#])
    }

    @Test func everySteeringScalarBecomesItsEscapeAndNothingElseChanges() {
        var steering: [Unicode.Scalar] =
            (0..<0x20).compactMap(Unicode.Scalar.init) + (0x7F...0x9F).compactMap(Unicode.Scalar.init)
        let bidi: [UInt32] = [0x061C, 0x200E, 0x200F] + Array(0x202A...0x202E) + Array(0x2066...0x2069)
        steering += bidi.compactMap(Unicode.Scalar.init)
        for scalar in steering {
            let shown = TerminalCells.printable("<" + String(Character(scalar)) + ">")
            #expect(shown == "<\\u{" + String(scalar.value, radix: 16, uppercase: true) + "}>")
        }
        for text in ["plain", "日本語 👍 e\u{301}", #"a\u{1B} as typed"#, "\u{200B}\u{FEFF}"] {
            #expect(TerminalCells.printable(text) == text)
        }
    }
}
