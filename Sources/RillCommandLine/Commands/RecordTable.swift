import Foundation
import Rill

/// Records as a plain-text table: a column per top-level field, in order of first appearance.
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
        let columns = Self.columns(of: records)
        guard !columns.isEmpty else { return [] }
        let cells: [[String]] = records.map { record in
            columns.map { column in
                guard case .map(let fields) = record, let value = fields.first(where: { $0.name == column })?.value
                else { return "" }
                return clip(Self.cell(value))
            }
        }
        let widths = columns.indices.map { index in
            max(columns[index].count, cells.map { $0[index].count }.max() ?? 0)
        }
        func line(_ values: [String]) -> String {
            var line = zip(values, widths).map { $0.padding(toLength: $1, withPad: " ", startingAt: 0) }
                .joined(separator: "  ")
            // No trailing blanks (a regular expression here cost a table more than its cells).
            while let last = line.last, last.isWhitespace { line.removeLast() }
            return line
        }
        return [line(columns), line(widths.map { String(repeating: "─", count: $0) })] + cells.map(line)
    }

    private func clip(_ text: String) -> String {
        text.count <= maximumWidth ? text : String(text.prefix(maximumWidth - 1)) + "…"
    }

    /// The text of a value in a cell: strings as they are (a newline shown as ⏎), others as JSON.
    static func cell(_ value: RecordValue) -> String {
        switch value {
        case .null: "nil"
        case .string(let s), .url(let s): s.replacingOccurrences(of: "\n", with: "⏎")
        default: value.jsonString()
        }
    }
}
