import Foundation

/// A table of Rill's figure beside its baseline, measured in the same run.
struct ComparisonTable {
    struct Row {
        var name: String
        var rill: Double
        var baseline: Double
        var unit: String
        /// Higher is better (throughput) or lower is better (time, memory).
        var higherIsBetter: Bool
        var target: String
        /// The ratio to print (for example the median of per-round ratios); nil prints none.
        var ratio: Double?
    }

    var title: String
    var baselineName: String
    /// The heading of the measured column.
    var rillName = "rill"
    var rows: [Row] = []
    /// How the ratio was computed, printed under the table.
    var note: String?

    func render() -> String {
        let header = ["measure", rillName, baselineName, "ratio", "target"]
        var lines = [header]
        for row in rows {
            lines.append([
                "\(row.name) (\(row.unit))", Self.format(row.rill), Self.format(row.baseline),
                row.ratio.map { String(format: "%.2f×", $0) } ?? "—", row.target,
            ])
        }
        let widths = (0..<header.count).map { column in lines.map { $0[column].count }.max()! }
        var text = "\(title)\n"
        for (index, line) in lines.enumerated() {
            let cells = line.enumerated().map { column, cell in
                column == 0
                    ? cell.padding(toLength: widths[column], withPad: " ", startingAt: 0)
                    : String(repeating: " ", count: widths[column] - cell.count) + cell
            }
            text += "| " + cells.joined(separator: " | ") + " |\n"
            if index == 0 {
                text += "|" + widths.map { String(repeating: "-", count: $0 + 2) }.joined(separator: "|") + "|\n"
            }
        }
        text += (note ?? "ratio: median over rounds of rill ÷ \(baselineName), each pair measured back to back") + "\n"
        return text
    }

    private static func format(_ value: Double) -> String {
        value >= 100 ? String(format: "%.0f", value) : String(format: "%.2f", value)
    }
}
