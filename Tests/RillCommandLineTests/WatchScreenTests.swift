import Foundation
import RillWorkloads
import Testing

@testable import Rill
@testable import RillCommandLine

/// The full-screen watch's frames, against the rows they show: the table of the page as
/// `RecordTable` prints it when it fits, every cell a whole value or its prefix and "…" when it
/// does not, pages that cover the results once, and the marks of a change against the two lists.
@Suite struct WatchScreenTests {
    static func record(id: Int, value: Int, name: String) -> QueryRow {
        QueryRow(
            key: Array(String(id).utf8),
            record: .map([
                RecordField(name: "id", value: .int(Int64(id))), RecordField(name: "value", value: .int(Int64(value))),
                RecordField(name: "name", value: .string(name)),
            ]))
    }

    static func randomRows(_ count: Int, using random: inout SeededGenerator) -> [QueryRow] {
        (0..<count).map { id in
            let letters = Int.random(in: 0..<60, using: &random)
            let name = String((0..<letters).map { _ in "abcdefghij xyz".randomElement(using: &random)! })
            return record(id: id, value: Int.random(in: -1_000...1_000_000, using: &random), name: name)
        }
    }

    /// The field of a row record, as a cell shows it.
    static func cell(_ row: QueryRow, _ column: String) -> String {
        guard case .map(let fields) = row.record, let value = fields.first(where: { $0.name == column })?.value
        else { return "" }
        return RecordTable.cell(value)
    }

    /// The cells of a table line, cut where the rule line's columns are.
    static func cells(of line: String, rule: String) -> [String] {
        let characters = Array(line)
        var cells: [String] = []
        var start = 2
        for width in rule.dropFirst(2).split(separator: " ").map(\.count) {
            let end = min(characters.count, start + width)
            cells.append(start < end ? String(characters[start..<end]).trimmingCharacters(in: .whitespaces) : "")
            start += width + 2
        }
        return cells
    }

    @Test func aWideScreenShowsThePageAsTheTableOfItsRows() {
        var random = SeededGenerator(label: "wide screen")
        for _ in 0..<50 {
            let rows = Self.randomRows(Int.random(in: 0..<80, using: &random), using: &random)
            var screen = WatchScreen(query: "Thing", width: 200, height: Int.random(in: 6..<40, using: &random))
            screen.show(rows, sequence: 7)
            screen.scroll(to: Int.random(in: -5..<90, using: &random))
            let lines = screen.lines()
            #expect(lines.count == screen.height)
            let page = screen.page.map { line -> QueryRow in
                guard case .row(let offset) = line else { fatalError("no removed rows here") }
                return rows[offset]
            }
            #expect(page.count == min(rows.count, screen.pageSize))
            let table = RecordTable(page.map(\.record)).render()
            if rows.isEmpty {
                #expect(lines[1] == "  (no records)")
                #expect(lines[0] == "Thing · seq 7 · no records")
                continue
            }
            #expect(Array(lines[1..<(1 + table.count)]) == table.map { "  " + $0 }, "seed \(random.seed)")
            let first = screen.top + 1
            #expect(lines[0] == "Thing · seq 7 · rows \(first)–\(first + page.count - 1) of \(rows.count)")
            #expect(lines[lines.count - 2] == "results at commit 7")
            #expect(lines.last == WatchScreen.keys)
        }
    }

    @Test func aNarrowScreenCutsCellsToFitAndKeepsEveryLineInItsWidth() {
        var random = SeededGenerator(label: "narrow screen")
        for _ in 0..<200 {
            let rows = Self.randomRows(Int.random(in: 1..<30, using: &random), using: &random)
            let width = Int.random(in: 12..<90, using: &random)
            var screen = WatchScreen(query: "Thing where value > 3", width: width, height: 30)
            screen.show(rows, sequence: 1)
            let lines = screen.lines()
            #expect(lines.allSatisfy { TerminalCells.width(of: $0) <= width }, "seed \(random.seed)")
            let rule = lines[2]
            let names = Self.cells(of: lines[1], rule: rule)
            #expect(names.count == 3)
            for (offset, line) in lines[3..<(3 + screen.page.count)].enumerated() {
                for (column, shown) in zip(["id", "value", "name"], Self.cells(of: line, rule: rule)) {
                    let value = Self.cell(rows[offset], column)
                    // Whole, or a prefix and "…"; a column cut by the screen's edge may lose more.
                    let trimmed = value.trimmingCharacters(in: .whitespaces)
                    let whole = shown == trimmed
                    // A cut may end in the value's own spaces before the "…" (the cell reader trims the
                    // whole value's).
                    let cut = shown.hasSuffix("…") && value.drop(while: \.isWhitespace).hasPrefix(shown.dropLast())
                    #expect(whole || cut, "\(column) \(value) shown as \(shown) (width \(width))")
                }
            }
            let natural =
                2 + 2 * 2
                + ["id", "value", "name"].map { column in
                    min(40, max(column.count, rows.map { Self.cell($0, column).count }.max()!))
                }.reduce(0, +)
            if natural <= width, rows.allSatisfy({ Self.cell($0, "name").count <= WatchScreen.maximumCellWidth }) {
                #expect(
                    !lines[1..<(3 + screen.page.count)].contains { $0.contains("…") }, "nothing cut when the table fits"
                )
            }
        }
    }

    @Test func columnWidthsShrinkTheWidestFirst() {
        #expect(WatchScreen.fit([3, 10, 40], into: 60) == [3, 10, 40])
        #expect(WatchScreen.fit([3, 10, 40], into: 30) == [3, 10, 17])
        #expect(WatchScreen.fit([3, 20, 40], into: 30) == [3, 14, 13])
        #expect(WatchScreen.fit([5, 5], into: 3) == [2, 1])
        var random = SeededGenerator(label: "column widths")
        for _ in 0..<500 {
            let natural = (0..<Int.random(in: 1..<8, using: &random)).map { _ in Int.random(in: 1...40, using: &random)
            }
            let available = Int.random(in: natural.count...200, using: &random)
            let widths = WatchScreen.fit(natural, into: available)
            #expect(widths.reduce(0, +) == min(available, natural.reduce(0, +)), "\(natural) into \(available)")
            #expect(zip(widths, natural).allSatisfy { $0 <= $1 && $0 >= 1 })
        }
    }

    @Test func pagesCoverTheResultsOnceAndStayInBounds() {
        var random = SeededGenerator(label: "paging")
        for _ in 0..<100 {
            let count = Int.random(in: 0..<200, using: &random)
            let rows = (0..<count).map { Self.record(id: $0, value: $0, name: "") }
            var screen = WatchScreen(query: "Q", width: 80, height: Int.random(in: 2..<50, using: &random))
            screen.show(rows, sequence: 1)
            var seen: [Int] = []
            var previous = -1
            while true {
                let offsets = screen.page.map { line -> Int in
                    if case .row(let offset) = line { return offset }
                    return -1
                }
                seen += offsets.filter { $0 > seen.last ?? -1 }
                previous = screen.top
                screen.nextPage()
                if screen.top == previous { break }
            }
            #expect(seen == Array(0..<count), "every row once, in order (seed \(random.seed))")
            screen.lastPage()
            #expect(screen.page.count == min(count, screen.pageSize))
            #expect(screen.page.last == (count == 0 ? nil : .row(count - 1)))
            screen.nextPage()
            #expect(screen.top == screen.lastTop)
            screen.firstPage()
            screen.previousPage()
            screen.lineUp()
            #expect(screen.top == 0)
            // Random keys never leave the bounds, and the header counts the page.
            for _ in 0..<30 {
                switch Int.random(in: 0..<6, using: &random) {
                case 0: screen.nextPage()
                case 1: screen.previousPage()
                case 2: screen.lineDown()
                case 3: screen.lineUp()
                case 4: screen.resize(width: 80, height: Int.random(in: 1..<60, using: &random))
                default: screen.lastPage()
                }
                #expect((0...screen.lastTop).contains(screen.top))
                let lines = screen.lines()
                #expect(lines.count == screen.height)
                if count > 0, screen.height > 1 {
                    let shown = screen.page.count
                    #expect(
                        lines[0].hasSuffix("rows \(screen.top + 1)–\(screen.top + shown) of \(count)"), "\(lines[0])")
                }
            }
        }
    }

    @Test func aChangeMarksItsRowsAgainstTheTwoLists() {
        var random = SeededGenerator(label: "marks")
        for _ in 0..<200 {
            var old = Self.randomRows(Int.random(in: 0..<25, using: &random), using: &random)
            old.shuffle(using: &random)
            var new = old.filter { _ in Int.random(in: 0..<5, using: &random) > 0 }
            for index in new.indices where Bool.random(using: &random) {
                guard case .map(var fields) = new[index].record else { continue }
                if Bool.random(using: &random) { fields[1].value = .int(Int64(Int.random(in: 0..<9, using: &random))) }
                if Bool.random(using: &random) { fields[2].value = .string("renamed") }
                new[index].record = .map(fields)
            }
            new += (100..<(100 + Int.random(in: 0..<4, using: &random))).map {
                Self.record(id: $0, value: $0, name: "new")
            }
            new.shuffle(using: &random)
            let changed = Set(
                new.filter { row in old.contains { $0.key == row.key && $0.record != row.record } }.map(\.key))
            let change = ResultsDiff.between(
                old: old.map(\.key), oldModels: old, new: new.map(\.key), newModels: new, changed: changed,
                sequence: 9)
            guard !change.isEmpty else { continue }
            var screen = WatchScreen(query: "Q", width: 200, height: 80)
            screen.show(old, sequence: 8)
            screen.apply(change)
            #expect(screen.rows?.map(\.record) == new.map(\.record), "seed \(random.seed)")
            let lines = screen.lines()
            let body = Array(lines[3..<(3 + new.count + change.removals.count)])
            // Every row once (the removed among them as "-"), each marked as the two lists say.
            let removed = old.filter { row in !new.contains { $0.key == row.key } }
            #expect(body.filter { $0.hasPrefix("- ") }.count == removed.count)
            for row in new {
                let id = Self.cell(row, "id")
                let line = body.first { $0.dropFirst(2).hasPrefix(id + " ") && !$0.hasPrefix("- ") }
                #expect(line != nil, "row \(id) is shown")
                guard let line, let before = old.first(where: { $0.key == row.key }) else {
                    #expect(line?.hasPrefix("+ ") == true, "row \(id) is new: \(line ?? "")")
                    continue
                }
                let fields = ["value", "name"].filter { Self.cell(before, $0) != Self.cell(row, $0) }
                if fields.isEmpty {
                    #expect(!line.contains("(changed:"), "\(line)")
                } else {
                    #expect(line.hasPrefix("~ ") || line.hasPrefix("> "), "\(line)")
                    #expect(line.hasSuffix("  (changed: \(fields.joined(separator: ", ")))"), "\(line)")
                }
            }
            #expect(lines[lines.count - 2].hasPrefix("commit 9: "))
            // The removed rows are shown in one frame only.
            screen.dropRemoved()
            #expect(!screen.lines().contains { $0.hasPrefix("- ") })
        }
    }

    @Test func aChangeWithoutResultsShowsItsOwnRows() {
        var screen = WatchScreen(query: "Q", width: 80, height: 10)
        screen.connection = "connecting"
        #expect(screen.lines()[0] == "Q · connecting")
        #expect(screen.lines()[1] == "  (waiting for results)")
        let row = Self.record(id: 1, value: 2, name: "a")
        screen.apply(
            .init(sequence: 4, removals: [], insertions: [.init(offset: 0, element: row)], moves: [], updates: []))
        let lines = screen.lines()
        #expect(lines[0] == "Q · seq 4 · 1 changed rows (results not known) · connecting")
        #expect(lines[3].hasPrefix("+ 1 "))
    }

    @Test func colorsHighlightTheChangedCellsOnly() {
        var screen = WatchScreen(query: "Q", width: 80, height: 10)
        screen.colors = true
        let old = Self.record(id: 1, value: 2, name: "a")
        let new = Self.record(id: 1, value: 3, name: "a")
        screen.show([old], sequence: 1)
        screen.apply(
            .init(
                sequence: 2, removals: [], insertions: [], moves: [],
                updates: [.init(oldOffset: 0, offset: 0, oldElement: old, element: new)]))
        let line = screen.lines()[3]
        #expect(line.contains("\u{1B}[33;1;4m3"), "\(line.debugDescription)")
        #expect(!line.contains("\u{1B}[33;1;4ma"))
        screen.colors = false
        #expect(screen.lines()[3] == "~ 1   3      a  (changed: value)")
    }

    @Test func cellsAreCountedAsTheTerminalShowsThem() {
        #expect(TerminalCells.width(of: "abc") == 3)
        #expect(TerminalCells.width(of: "日本語") == 6)
        #expect(TerminalCells.width(of: "e\u{301}") == 1)
        #expect(TerminalCells.width(of: "👍") == 2)
        #expect(TerminalCells.width(of: "ＡＢ") == 4)
        #expect(TerminalCells.truncate("日本語", to: 4) == "日…")
        #expect(TerminalCells.truncate("日本語", to: 6) == "日本語")
        #expect(TerminalCells.truncate("abcdef", to: 4) == "abc…")
        #expect(TerminalCells.truncate("abcdef", to: 1) == "…")
        #expect(TerminalCells.fit("日本", to: 5) == "日本 ")
        #expect(TerminalCells.printable("a\u{1B}[2Jb\tc") == #"a\u{1B}[2Jb\u{9}c"#)
        var random = SeededGenerator(label: "cells")
        let alphabet: [Character] = ["a", "Z", "日", "é", "e\u{301}", "👍", "─", "Ａ", "…"]
        for _ in 0..<500 {
            let text = String(
                (0..<Int.random(in: 0..<20, using: &random)).map { _ in alphabet.randomElement(using: &random)! })
            let width = Int.random(in: 0..<25, using: &random)
            let cut = TerminalCells.truncate(text, to: width)
            #expect(TerminalCells.width(of: cut) <= width, "\(text) to \(width): \(cut)")
            #expect(cut == text || (cut.hasSuffix("…") && text.hasPrefix(cut.dropLast())) || width == 0)
            #expect(TerminalCells.width(of: TerminalCells.fit(text, to: width)) == width)
        }
    }

    @Test func keysAreReadFromTheTerminalsBytes() {
        func keys(_ text: String) -> [WatchKey] { WatchKey.keys(in: Array(text.utf8)) }
        #expect(
            keys(" jfbkgGq") == [
                .nextPage, .nextPage, .nextPage, .previousPage, .previousPage, .firstPage, .lastPage, .quit,
            ])
        #expect(
            keys("\u{1B}[6~\u{1B}[5~\u{1B}[H\u{1B}[F\u{1B}OH\u{1B}OF\u{1B}[1~\u{1B}[4~") == [
                .nextPage, .previousPage, .firstPage, .lastPage, .firstPage, .lastPage, .firstPage, .lastPage,
            ])
        #expect(keys("\u{1B}[B\u{1B}[A\u{0C}x\u{1B}[Z\u{1B}") == [.lineDown, .lineUp, .redraw])
    }
}
