import Rill

/// Tables with marked rows, for a person.
final class TerminalRendering: WatchRendering, @unchecked Sendable {
    // Sendable: `rows` is touched only from the live query's handler, which runs serially.
    static let fullTableLimit = 40

    private let colors: Bool
    /// The results as of the last change; nil until results arrive (a watch resumed through the
    /// daemon gets only changes).
    private var rows: [QueryRow]?

    init(colors: Bool) { self.colors = colors }

    func results(_ rows: [QueryRow], sequence: UInt64) -> String {
        self.rows = rows
        let table = RecordTable(rows.map(\.record)).render()
        return (table + ["(\(Self.count(rows.count)) at commit \(sequence))", "", ""]).joined(separator: "\n")
    }

    func change(_ change: ResultsChange<QueryRow>) -> String {
        guard var rows else { return changedRows(change) }
        // Applied in place: the rows are not shared while it runs, so nothing is copied.
        self.rows = nil
        change.apply(to: &rows)
        self.rows = rows
        var marks: [Int: Mark] = [:]
        var notes: [Int: String] = [:]
        for insertion in change.insertions { marks[insertion.offset] = .inserted }
        for move in change.moves {
            marks[move.to] = .moved
            notes[move.to] = Self.note(move.oldElement, move.element)
        }
        for update in change.updates {
            marks[update.offset] = .updated
            notes[update.offset] = Self.note(update.oldElement, update.element)
        }
        // Small results are shown whole; larger ones only as their changed rows, so a change
        // costs what it changed, not the size of the results.
        let showAll = rows.count <= Self.fullTableLimit
        let shown = showAll ? Array(rows.indices) : marks.keys.sorted()
        // One table over the removed rows and the shown ones, so that their columns line up.
        let removed = change.removals.map(\.element)
        let lines = RecordTable((removed + shown.map { rows[$0] }).map(\.record)).render()
        guard lines.count >= 2 else {
            return header(change) + "\n(no records)\n\n"
        }
        var out = [header(change), "  " + lines[0], "  " + lines[1]]
        for (index, _) in removed.enumerated() {
            out.append(paint(.removed, "- " + lines[2 + index]))
        }
        for (index, offset) in shown.enumerated() {
            let mark = marks[offset] ?? .none
            out.append(paint(mark, mark.symbol + " " + lines[2 + removed.count + index] + (notes[offset] ?? "")))
        }
        if !showAll {
            out.append("  (\(Self.count(rows.count - marks.count)) unchanged not shown)")
        }
        out.append("(\(Self.count(rows.count)))")
        return out.joined(separator: "\n") + "\n\n"
    }

    /// A change whose results before it are not known: its rows, marked.
    private func changedRows(_ change: ResultsChange<QueryRow>) -> String {
        var marked: [(Mark, QueryRow, String)] = change.removals.map { (.removed, $0.element, "") }
        marked += change.insertions.map { (.inserted, $0.element, "") }
        marked += change.moves.map { (.moved, $0.element, Self.note($0.oldElement, $0.element)) }
        marked += change.updates.map { (.updated, $0.element, Self.note($0.oldElement, $0.element)) }
        let lines = RecordTable(marked.map(\.1.record)).render()
        guard lines.count >= 2 else { return header(change) + "\n\n" }
        var out = [header(change), "  " + lines[0], "  " + lines[1]]
        for (index, (mark, _, note)) in marked.enumerated() {
            out.append(paint(mark, mark.symbol + " " + lines[2 + index] + note))
        }
        return out.joined(separator: "\n") + "\n\n"
    }

    private func header(_ change: ResultsChange<QueryRow>) -> String {
        var parts: [String] = []
        if !change.insertions.isEmpty { parts.append("\(change.insertions.count) inserted") }
        if !change.removals.isEmpty { parts.append("\(change.removals.count) removed") }
        if !change.updates.isEmpty { parts.append("\(change.updates.count) updated") }
        if !change.moves.isEmpty { parts.append("\(change.moves.count) moved") }
        let text = "── commit \(change.sequence): " + parts.joined(separator: ", ") + " ──"
        return colors ? "\u{1B}[1m" + text + "\u{1B}[0m" : text
    }

    enum Mark {
        case none, inserted, removed, updated, moved

        var symbol: String {
            switch self {
            case .none: " "
            case .inserted: "+"
            case .removed: "-"
            case .updated: "~"
            case .moved: ">"
            }
        }

        /// ANSI SGR parameters.
        var color: String? {
            switch self {
            case .none: nil
            case .inserted: "32"
            case .removed: "31"
            case .updated: "33"
            case .moved: "36"
            }
        }
    }

    private func paint(_ mark: Mark, _ line: String) -> String {
        guard colors, let color = mark.color else { return line }
        return "\u{1B}[\(color)m" + line + "\u{1B}[0m"
    }

    private static func count(_ n: Int) -> String { n == 1 ? "1 record" : "\(n) records" }

    /// `  (changed: a, b)` after the row of a record that changed, naming its top-level fields
    /// that differ; empty when none does (a row a descriptor change moved).
    private static func note(_ old: QueryRow, _ new: QueryRow) -> String {
        let fields = changedFields(from: old.record, to: new.record)
        return fields.isEmpty ? "" : "  (changed: \(TerminalCells.printable(fields.joined(separator: ", "))))"
    }

    /// The top-level fields whose values differ between two versions of a record, in the new
    /// version's order, then those the new version no longer has (as `rill log` names them).
    static func changedFields(from old: RecordValue, to new: RecordValue) -> [String] {
        guard case .map(let before) = old, case .map(let after) = new else { return [] }
        var changed = after.filter { field in before.first { $0.name == field.name }?.value != field.value }
        changed += before.filter { field in !after.contains { $0.name == field.name } }
        return changed.map(\.name)
    }
}
