import Rill

/// What the full-screen `rill watch` shows, as a value: the results, the marks of the last change,
/// the terminal's size and the page, and from them the lines of a frame. No terminal here: the
/// lines are text (with SGR colors when asked), one per screen row, each at most `width` cells.
///
/// A frame is a header (the query, the commit, the rows shown, the connection), the column names
/// and their rule, a page of rows, a status line (the last change) and the keys. Rows marked by
/// the last change: `+` inserted, `~` updated, `>` moved, the fields that changed highlighted and
/// named after the row; rows it removed are shown as `-` at their old place until
/// ``dropRemoved()`` (the next redraw).
struct WatchScreen {
    /// The query as given, first in the header.
    var query: String
    /// The results, in order; nil until they are known (a watch resumed through a daemon gets
    /// changes only, and then shows the rows of the last change).
    var rows: [QueryRow]?
    /// The commit the rows reflect.
    var sequence: UInt64?
    /// The marks of the last change, by offset in `rows`.
    var marks: [Int: Mark] = [:]
    /// The top-level fields each updated or moved row changed, by offset in `rows`.
    var changedFields: [Int: [String]] = [:]
    /// The rows the last change removed, as they were, at their old offsets (ascending).
    var removed: [(offset: Int, record: RecordValue)] = []
    /// The last change, said in a few words; nil before the first.
    var lastChange: String?
    /// With `--connect`: how the daemon's stream stands ("connected", "reconnecting"…).
    var connection: String?
    var width: Int
    var height: Int
    /// The first shown line of the page, counting the removed rows shown.
    private(set) var top = 0
    /// Colors and highlights (SGR), off the lines' widths.
    var colors = false
    /// The rows of the last change when the results are not known.
    private var knownRowsOfChange: [QueryRow] = []

    static let maximumCellWidth = 40
    /// The lines around the page: header, column names, rule; status and keys.
    static let linesAroundPage = 5

    init(query: String, width: Int, height: Int) {
        self.query = query
        self.width = width
        self.height = height
    }

    /// How a row is marked.
    enum Mark: Equatable {
        case inserted, updated, moved, removed

        var symbol: String {
            switch self {
            case .inserted: "+"
            case .updated: "~"
            case .moved: ">"
            case .removed: "-"
            }
        }

        /// ANSI SGR parameters.
        var color: String {
            switch self {
            case .inserted: "32"
            case .updated: "33"
            case .moved: "36"
            case .removed: "31"
            }
        }
    }

    // MARK: - Results and changes

    /// New results (the first, or a reset): no marks; the page stays where it was when it can.
    mutating func show(_ rows: [QueryRow], sequence: UInt64) {
        self.rows = rows
        self.sequence = sequence
        knownRowsOfChange = []
        marks = [:]
        changedFields = [:]
        removed = []
        lastChange = "results at commit \(sequence)"
        clampTop()
    }

    /// Applies `change` to the rows and marks what it changed.
    mutating func apply(_ change: ResultsChange<QueryRow>) {
        marks = [:]
        changedFields = [:]
        removed = change.removals.map { ($0.offset, $0.element.record) }
        sequence = change.sequence
        var parts: [String] = []
        if !change.insertions.isEmpty { parts.append("\(change.insertions.count) inserted") }
        if !change.removals.isEmpty { parts.append("\(change.removals.count) removed") }
        if !change.updates.isEmpty { parts.append("\(change.updates.count) updated") }
        if !change.moves.isEmpty { parts.append("\(change.moves.count) moved") }
        var changed: [String] = []
        if var rows {
            // Applied in place: not shared while it runs, so nothing is copied.
            self.rows = nil
            change.apply(to: &rows)
            self.rows = rows
            for insertion in change.insertions { marks[insertion.offset] = .inserted }
            for move in change.moves {
                marks[move.to] = .moved
                changedFields[move.to] = TerminalRendering.changedFields(
                    from: move.oldElement.record, to: move.element.record)
            }
            for update in change.updates {
                marks[update.offset] = .updated
                changedFields[update.offset] = TerminalRendering.changedFields(
                    from: update.oldElement.record, to: update.element.record)
            }
        } else {
            // The results before it are not known: the change's own rows, marked.
            var own: [QueryRow] = []
            for insertion in change.insertions {
                marks[own.count] = .inserted
                own.append(insertion.element)
            }
            for move in change.moves {
                marks[own.count] = .moved
                changedFields[own.count] = TerminalRendering.changedFields(
                    from: move.oldElement.record, to: move.element.record)
                own.append(move.element)
            }
            for update in change.updates {
                marks[own.count] = .updated
                changedFields[own.count] = TerminalRendering.changedFields(
                    from: update.oldElement.record, to: update.element.record)
                own.append(update.element)
            }
            removed = removed.enumerated().map { (own.count + $0.offset, $0.element.record) }
            rows = nil
            knownRowsOfChange = own
        }
        for offset in changedFields.keys.sorted() {
            for field in changedFields[offset]! where !changed.contains(field) { changed.append(field) }
        }
        lastChange =
            "commit \(change.sequence): " + parts.joined(separator: ", ")
            + (changed.isEmpty ? "" : " (changed: \(TerminalCells.printable(changed.joined(separator: ", "))))")
        clampTop()
    }

    /// The removed rows were shown once: the next frame goes without them.
    mutating func dropRemoved() {
        guard !removed.isEmpty else { return }
        removed = []
        clampTop()
    }

    /// The terminal's new size; the page keeps its first row where it can.
    mutating func resize(width: Int, height: Int) {
        self.width = width
        self.height = height
        clampTop()
    }

    // MARK: - Paging

    /// The rows a page shows.
    var pageSize: Int { max(1, height - Self.linesAroundPage) }

    /// The lines of the results shown, the removed rows among them.
    var lineCount: Int { shownRows.count + removed.count }

    /// The highest `top`: the last page is full when there are enough lines.
    var lastTop: Int { max(0, lineCount - pageSize) }

    mutating func nextPage() { scroll(to: top + pageSize) }
    mutating func previousPage() { scroll(to: top - pageSize) }
    mutating func firstPage() { scroll(to: 0) }
    mutating func lastPage() { scroll(to: lastTop) }
    mutating func lineDown() { scroll(to: top + 1) }
    mutating func lineUp() { scroll(to: top - 1) }

    /// Shows the page that starts at `line` (bounded to the results).
    mutating func scroll(to line: Int) {
        top = line
        clampTop()
    }

    private mutating func clampTop() { top = min(max(0, top), lastTop) }

    private var shownRows: [QueryRow] { rows ?? knownRowsOfChange }

    /// What line `index` of the results shows: a row of the results (its offset) or a removed row.
    enum Line: Equatable {
        case row(Int)
        case removed(Int)
    }

    /// The lines of the results in order, the removed rows at their old offsets.
    func line(_ index: Int) -> Line {
        var before = 0
        for (number, removal) in removed.enumerated() {
            let position = min(removal.offset, shownRows.count + number)
            if position == index { return .removed(number) }
            if position < index { before += 1 } else { break }
        }
        return .row(index - before)
    }

    /// The lines the page shows.
    var page: [Line] { (top..<min(lineCount, top + pageSize)).map(line) }

    // MARK: - The frame

    /// The frame: exactly `height` lines, each at most `width` cells (plain text, or with SGR
    /// sequences when `colors`).
    func lines() -> [String] {
        let page = self.page
        let records = page.map(record)
        let columns = RecordTable.columns(of: records)
        let cells = records.map { record in
            columns.map { column -> String in
                guard case .map(let fields) = record, let value = fields.first(where: { $0.name == column })?.value
                else { return "" }
                return RecordTable.cell(value)
            }
        }
        // Field names are stored text too: shown as safely as the values.
        let headers = columns.map(TerminalCells.printable)
        let natural = columns.indices.map { index in
            min(
                Self.maximumCellWidth,
                max(
                    TerminalCells.width(of: headers[index]),
                    cells.map { TerminalCells.width(of: $0[index]) }.max() ?? 0))
        }
        let widths = Self.fit(natural, into: width - 2 - 2 * max(0, columns.count - 1))
        var out: [[Segment]] = [[Segment(header())]]
        if columns.isEmpty {
            out.append([
                Segment(rows == nil && knownRowsOfChange.isEmpty ? "  (waiting for results)" : "  (no records)")
            ])
            out.append([])
        } else {
            out.append([Segment("  " + Self.join(zip(headers, widths).map { TerminalCells.fit($0, to: $1) }))])
            out.append([Segment("  " + Self.join(widths.map { String(repeating: "─", count: $0) }))])
        }
        for (line, row) in zip(page, cells) {
            let mark: Mark?
            let changed: [String]
            switch line {
            case .row(let offset):
                mark = marks[offset]
                changed = changedFields[offset] ?? []
            case .removed:
                mark = .removed
                changed = []
            }
            var segments = [Segment((mark?.symbol ?? " ") + " ", style: mark?.color)]
            for (index, (cell, cellWidth)) in zip(row, widths).enumerated() {
                if index > 0 { segments.append(Segment("  ", style: mark?.color)) }
                let highlighted = changed.contains(columns[index])
                // The last cell is not padded: a note follows it two cells on.
                let last = index == row.count - 1
                segments.append(
                    Segment(
                        last ? TerminalCells.truncate(cell, to: cellWidth) : TerminalCells.fit(cell, to: cellWidth),
                        style: highlighted ? (mark?.color ?? "0") + ";1;4" : mark?.color))
            }
            if !changed.isEmpty {
                let names = TerminalCells.printable(changed.joined(separator: ", "))
                segments.append(Segment("  (changed: \(names))", style: mark?.color))
            }
            out.append(segments)
        }
        while out.count < height - 2 { out.append([]) }
        out.append([Segment(lastChange ?? "", style: "1")])
        out.append([Segment(Self.keys)])
        return out.prefix(height).map(render)
    }

    static let keys = "space/j next  b/k previous  g first  G last  q quit"

    /// `query · seq N · rows a–b of n · connection`.
    func header() -> String {
        var parts = [query]
        if let sequence { parts.append("seq \(sequence)") }
        let rowLines = page.compactMap { if case .row(let offset) = $0 { offset } else { nil } }
        let count = shownRows.count
        if rows == nil, !knownRowsOfChange.isEmpty {
            parts.append("\(count) changed rows (results not known)")
        } else if rows != nil, let first = rowLines.first, let last = rowLines.last {
            parts.append("rows \(first + 1)–\(last + 1) of \(count)")
        } else if rows != nil {
            parts.append(count == 0 ? "no records" : "\(count) records")
        }
        if let connection { parts.append(connection) }
        return parts.joined(separator: " · ")
    }

    private func record(_ line: Line) -> RecordValue {
        switch line {
        case .row(let offset): shownRows[offset].record
        case .removed(let number): removed[number].record
        }
    }

    /// Column widths that fit `available` cells: all of them when they fit; else the widest
    /// shrink to a common width, the largest for which the table fits (at least one cell each).
    static func fit(_ natural: [Int], into available: Int) -> [Int] {
        guard natural.reduce(0, +) > available else { return natural }
        var low = 1
        var high = natural.max() ?? 1
        while low < high {
            let cap = (low + high + 1) / 2
            if natural.reduce(0, { $0 + min($1, cap) }) <= available { low = cap } else { high = cap - 1 }
        }
        var widths = natural.map { min($0, low) }
        // The cells the common width left over go to the shrunk columns, first ones first.
        var left = available - widths.reduce(0, +)
        for index in widths.indices where left > 0 && natural[index] > widths[index] {
            widths[index] += 1
            left -= 1
        }
        return widths
    }

    private static func join(_ cells: [String]) -> String {
        var line = cells.joined(separator: "  ")
        while line.last == " " { line.removeLast() }
        return line
    }

    // MARK: - Styled text

    /// Text of a line, styled as a whole.
    private struct Segment {
        var text: String
        var style: String?

        init(_ text: String, style: String? = nil) {
            self.text = text
            self.style = style
        }
    }

    /// The segments cut to `width` cells, their blanks at the end dropped; with SGR when
    /// `colors`.
    private func render(_ segments: [Segment]) -> String {
        var line = ""
        var used = 0
        var pieces: [(String, String?)] = []
        for segment in segments {
            let cells = TerminalCells.width(of: segment.text)
            if used + cells <= width {
                pieces.append((segment.text, segment.style))
                used += cells
                continue
            }
            // The line's last cell says that it goes on.
            let room = width - used
            if room > 0 { pieces.append((TerminalCells.truncate(segment.text, to: room), segment.style)) }
            break
        }
        while let last = pieces.indices.last {
            while pieces[last].0.last == " " { pieces[last].0.removeLast() }
            guard pieces[last].0.isEmpty else { break }
            pieces.removeLast()
        }
        for (text, style) in pieces {
            if colors, let style, !text.isEmpty {
                line += "\u{1B}[\(style)m" + text + "\u{1B}[0m"
            } else {
                line += text
            }
        }
        return line
    }
}
