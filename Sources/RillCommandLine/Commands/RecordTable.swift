import Foundation
import Rill

/// Records as a plain-text table: a column per top-level field, in order of first appearance.
///
/// Columns line up on a terminal: widths are counted in terminal cells (``TerminalCells``), a wide
/// character two, a combining mark none. What is stored never steers the terminal: control and
/// bidirectional characters in values and field names are shown as escapes
/// (``TerminalCells/printable(_:)``).
struct RecordTable {
    var records: [RecordValue]
    var maximumWidth = 40

    init(_ records: [RecordValue]) { self.records = records }

    /// The columns of `records`: their top-level fields, in order of first appearance (a record
    /// that is not a map has none).
    static func columns(of records: [RecordValue]) -> [String] {
        var columns: [String] = []
        var seen: Set<String> = []
        for case .map(let fields) in records {
            for field in fields where seen.insert(field.name).inserted { columns.append(field.name) }
        }
        return columns
    }

    func render() -> [String] {
        let fields = Self.columns(of: records)
        guard !fields.isEmpty else { return [] }
        let columns = fields.map(TerminalCells.printable)
        let cells: [[String]] = records.map { record in
            fields.map { column in
                guard case .map(let fields) = record, let value = fields.first(where: { $0.name == column })?.value
                else { return "" }
                return clip(Self.cell(value))
            }
        }
        let widths = columns.indices.map { index in
            max(TerminalCells.width(of: columns[index]), cells.map { TerminalCells.width(of: $0[index]) }.max() ?? 0)
        }
        func line(_ values: [String]) -> String {
            var line = zip(values, widths).map { TerminalCells.fit($0, to: $1) }.joined(separator: "  ")
            // No trailing blanks (a regular expression here cost a table more than its cells).
            while let last = line.last, last.isWhitespace { line.removeLast() }
            return line
        }
        return [line(columns), line(widths.map { String(repeating: "─", count: $0) })] + cells.map(line)
    }

    private func clip(_ text: String) -> String { TerminalCells.truncate(text, to: maximumWidth) }

    /// The text of a value in a cell: strings as they are (a newline shown as ⏎), dates, UUIDs and
    /// data as their text (as CSV has them), arrays and objects as JSON; any other control or
    /// bidirectional character as its escape (``TerminalCells/printable(_:)``).
    static func cell(_ value: RecordValue) -> String {
        switch value {
        case .null: "nil"
        case .string(let s), .url(let s): TerminalCells.printable(s.replacingOccurrences(of: "\n", with: "⏎"))
        case .array, .map: TerminalCells.printable(value.jsonString())
        default: TerminalCells.printable(RecordCSV.scalarText(value))
        }
    }
}
