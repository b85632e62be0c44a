import Foundation

/// What a watcher printed, across its restarts, checked against a ``WatchOracle``.
///
/// A watcher prints NDJSON (Documentation/Protocol.md, Part 1): its first results, then one line
/// per commit that changed them, and progress lines. Applying its changes in turn to its first
/// results must give the oracle's results after each of those commits; its sequences must only
/// grow (across its restarts too), and none of the commits that changed the results may be
/// missing: every change exactly once, in order.
package struct WatchTranscript {
    /// Who printed it, for the problems' sentences.
    package var name: String
    /// The results as the watcher's lines make them.
    package private(set) var rows: [WatchOracle.Row]?
    /// The last sequence printed (results, change or progress): where a restart resumes.
    package private(set) var last: UInt64?
    /// Every line, in order, with the run (process start) it came from.
    private var lines: [(run: Int, text: String)] = []
    private var runs = 0

    package init(name: String) { self.name = name }

    /// Takes in the lines of one run of the watcher, and notes the last sequence they printed.
    package mutating func add(run lines: some Sequence<String>) {
        runs += 1
        for line in lines {
            self.lines.append((runs, line))
            if let sequence = Self.parse(line)?.sequence { last = sequence }
        }
    }

    /// Checks every line against `oracle`; returns the changes seen and the problems found.
    package func check(against oracle: WatchOracle) -> (changes: Int, problems: [String]) {
        var problems: [String] = []
        var rows: [WatchOracle.Row]?
        var previous: UInt64?
        var changes = 0
        func problem(_ text: String) {
            if problems.count < 20 { problems.append("\(name): \(text)") }
        }
        for (run, text) in lines {
            guard let line = Self.parse(text) else {
                problem("run \(run) printed a line that is not a watch line: \(text.prefix(200))")
                continue
            }
            if let previous, line.sequence <= previous {
                problem("run \(run) printed seq \(line.sequence) after seq \(previous): sequences must grow")
            }
            // A change line must be the next commit that changed the results; a progress line
            // says every change up to its commit was printed.
            if let previous, let missed = oracle.nextChange(after: previous),
                line.isProgress ? missed <= line.sequence : (line.isChange && missed < line.sequence)
            {
                problem("run \(run) never printed the change of commit \(missed) (next line: seq \(line.sequence))")
            }
            switch line.kind {
            case .results(let initial):
                if rows != nil { problem("run \(run) printed results again at seq \(line.sequence) (a reset)") }
                rows = initial
            case .change(let change):
                guard let current = rows else {
                    problem("run \(run) printed a change at seq \(line.sequence) before any results")
                    continue
                }
                changes += 1
                if oracle.nextChange(after: line.sequence - 1) != line.sequence {
                    problem(
                        "run \(run) printed a change at seq \(line.sequence), a commit that left the results as they were"
                    )
                }
                guard let applied = change.apply(to: current) else {
                    problem("run \(run): the change at seq \(line.sequence) does not apply to the results before it")
                    rows = oracle.rows(at: line.sequence)
                    continue
                }
                rows = applied
            case .progress:
                break
            }
            if let rows, rows != oracle.rows(at: line.sequence) {
                problem(
                    "after seq \(line.sequence) (run \(run)) the watcher holds \(rows) where the log gives "
                        + "\(oracle.rows(at: line.sequence))")
            }
            previous = line.sequence
        }
        if let previous, let missed = oracle.nextChange(after: previous) {
            problem("never printed the change of commit \(missed) (its last line: seq \(previous))")
        }
        if previous == nil { problem("printed nothing") }
        return (changes, problems)
    }

    // MARK: - Lines

    private struct Line {
        enum Kind {
            case results([WatchOracle.Row])
            case change(Change)
            case progress
        }
        var sequence: UInt64
        var kind: Kind

        var isProgress: Bool {
            if case .progress = kind { true } else { false }
        }
        var isChange: Bool {
            if case .change = kind { true } else { false }
        }
    }

    /// A change line's parts, each at its offsets (Documentation/Protocol.md, "Changes").
    private struct Change {
        var removals: [Int] = []
        var insertions: [(offset: Int, row: WatchOracle.Row)] = []
        var moves: [(from: Int, to: Int, row: WatchOracle.Row)] = []
        var updates: [(offset: Int, row: WatchOracle.Row)] = []

        /// The results after the change: removals and moves' sources taken out, highest offset
        /// first; insertions and moves' destinations put in, lowest first; updates replaced.
        func apply(to rows: [WatchOracle.Row]) -> [WatchOracle.Row]? {
            var rows = rows
            for offset in (removals + moves.map(\.from)).sorted(by: >) {
                guard offset < rows.count else { return nil }
                rows.remove(at: offset)
            }
            let entering = insertions.map { ($0.offset, $0.row) } + moves.map { ($0.to, $0.row) }
            for (offset, row) in entering.sorted(by: { $0.0 < $1.0 }) {
                guard offset <= rows.count else { return nil }
                rows.insert(row, at: offset)
            }
            for (offset, row) in updates {
                guard offset < rows.count else { return nil }
                rows[offset] = row
            }
            return rows
        }
    }

    private static func parse(_ text: String) -> Line? {
        guard let object = try? JSONSerialization.jsonObject(with: Data(text.utf8)) as? [String: Any],
            let sequence = (object["seq"] as? NSNumber)?.uint64Value
        else { return nil }
        if let results = object["results"] as? [Any] {
            let rows = results.compactMap { row($0) }
            return rows.count == results.count ? Line(sequence: sequence, kind: .results(rows)) : nil
        }
        guard object["removals"] != nil || object["insertions"] != nil else {
            return object.count == 1 ? Line(sequence: sequence, kind: .progress) : nil
        }
        var change = Change()
        for entry in object["removals"] as? [[String: Any]] ?? [] {
            guard let offset = entry["offset"] as? Int else { return nil }
            change.removals.append(offset)
        }
        for entry in object["insertions"] as? [[String: Any]] ?? [] {
            guard let offset = entry["offset"] as? Int, let row = row(entry["record"]) else { return nil }
            change.insertions.append((offset, row))
        }
        for entry in object["moves"] as? [[String: Any]] ?? [] {
            guard let from = entry["from"] as? Int, let to = entry["to"] as? Int, let row = row(entry["record"])
            else { return nil }
            change.moves.append((from, to, row))
        }
        for entry in object["updates"] as? [[String: Any]] ?? [] {
            guard let offset = entry["offset"] as? Int, let row = row(entry["record"]) else { return nil }
            change.updates.append((offset, row))
        }
        return Line(sequence: sequence, kind: .change(change))
    }

    private static func row(_ value: Any?) -> WatchOracle.Row? {
        guard let record = value as? [String: Any], let id = record["id"] as? String,
            let number = (record["number"] as? NSNumber)?.intValue
        else { return nil }
        return WatchOracle.Row(id: id, number: number)
    }
}
