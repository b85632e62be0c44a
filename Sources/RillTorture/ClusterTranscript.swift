import Rill

/// What one cluster node journaled, over all its incarnations, checked against the replay of the
/// log (``ClusterOracle``).
///
/// For each incarnation and live query: the initial results are the replay's at their commit;
/// each change comes after the previous event's commit (in order), applied to the results so far
/// gives the replay's results at its commit, and is a commit that changed them (no change told
/// twice or of nothing); no commit between two events, or before the incarnation's `end`, changed
/// the results unseen (nothing skipped). An incarnation killed mid-run is checked up to each
/// query's last event.
package struct ClusterTranscript: Sendable {
    package let node: Int
    package private(set) var acknowledged: [AcknowledgedSave] = []
    /// The acknowledged saves, with the numbers they wrote (nil for a delete).
    package private(set) var saves: [(sequence: UInt64, writes: [ClusterJournal.Write])] = []
    package private(set) var refusals: [String: Int] = [:]
    package private(set) var problems: [String] = []
    /// The live queries' results at the end of the last incarnation, by query.
    package private(set) var finalRows: [Int: [ClusterQuery.Row]] = [:]
    /// The commit the last incarnation ended at; nil when it did not end.
    package private(set) var end: UInt64?
    package private(set) var incarnations = 0
    package private(set) var changesChecked = 0

    package init(node: Int, path: String, oracle: ClusterOracle) throws {
        self.node = node
        let (lines, torn) = try ClusterJournal.read(path: path)
        for index in torn where index < lines.count && lines[index].kind != "start" {
            problems.append("node \(node): an unreadable line of its journal, not cut by a kill (before line \(index))")
        }
        var rows: [Int: [ClusterQuery.Row]] = [:]
        var seen: [Int: UInt64] = [:]
        var ended: UInt64?
        for line in lines {
            switch line.kind {
            case "start":
                incarnations += 1
                (rows, seen, ended) = ([:], [:], nil)
            case "initial":
                guard let query = line.query, let sequence = line.sequence else { continue }
                if rows[query] != nil { problem("query \(query) was given initial results twice") }
                let initial = line.rows ?? []
                let expected = oracle.rows(query, at: sequence)
                if initial != expected {
                    problem("query \(query)'s initial results at \(sequence) are \(initial), the replay's \(expected)")
                }
                rows[query] = initial
                seen[query] = sequence
            case "change":
                guard let query = line.query, let sequence = line.sequence else { continue }
                guard var current = rows[query], let previous = seen[query] else {
                    problem("query \(query) was told of commit \(sequence) before its initial results")
                    continue
                }
                changesChecked += 1
                if sequence <= previous {
                    problem("query \(query) was told of commit \(sequence) after commit \(previous): out of order")
                }
                let missed = oracle.changed(query, after: previous, through: sequence - 1)
                if !missed.isEmpty {
                    problem("query \(query) was not told of commits \(missed) (told of \(previous), then \(sequence))")
                }
                if !oracle.changed(query, after: sequence - 1, through: sequence).contains(sequence) {
                    problem("query \(query) was told of commit \(sequence), which did not change its results")
                }
                let change = ClusterJournal.change(of: line)
                let expected = oracle.rows(query, at: sequence)
                if Self.fits(change, current) {
                    change.apply(to: &current)
                    if current != expected {
                        problem("query \(query)'s changes give \(current) at \(sequence), the replay \(expected)")
                    }
                } else {
                    problem("query \(query)'s change at \(sequence) does not fit the results it follows, \(current)")
                }
                // Checked on from the replay's results after a problem, so that one tells what it did alone.
                current = expected
                rows[query] = current
                seen[query] = sequence
            case "save":
                guard let sequence = line.sequence else { continue }
                let writes = line.writes ?? []
                saves.append((sequence, writes))
                acknowledged.append(
                    AcknowledgedSave(
                        sequence: sequence,
                        changes: writes.map {
                            .init(entity: ClusterItem.entity, key: ClusterItem.key($0.id), isDelete: $0.number == nil)
                        }))
            case "refused":
                refusals[line.code ?? "?", default: 0] += 1
            case "end":
                guard let sequence = line.sequence else { continue }
                ended = sequence
                for query in 0..<oracle.queries.count {
                    guard let previous = seen[query] else {
                        problem("query \(query) had no initial results by the end")
                        continue
                    }
                    let missed = oracle.changed(query, after: previous, through: sequence)
                    if !missed.isEmpty { problem("query \(query) was not told of commits \(missed) by the end") }
                }
            case "failure":
                problem(line.message ?? "a failure")
            default:
                break
            }
        }
        end = ended
        if ended != nil { finalRows = rows }
    }

    /// Whether `change` can apply to `rows`: what it removes, moves and updates is there, and it
    /// inserts within the results.
    static func fits(_ change: ResultsChange<ClusterQuery.Row>, _ rows: [ClusterQuery.Row]) -> Bool {
        let removed = change.removals.map { ($0.offset, $0.element) } + change.moves.map { ($0.from, $0.oldElement) }
        guard Set(removed.map(\.0)).count == removed.count,
            removed.allSatisfy({ $0.0 >= 0 && $0.0 < rows.count && rows[$0.0] == $0.1 }),
            change.updates.allSatisfy({
                $0.oldOffset >= 0 && $0.oldOffset < rows.count && rows[$0.oldOffset] == $0.oldElement
            })
        else { return false }
        let inserted = (change.insertions.map(\.offset) + change.moves.map(\.to)).sorted()
        let remaining = rows.count - removed.count
        for (index, offset) in inserted.enumerated() where offset < 0 || offset > remaining + index { return false }
        let count = remaining + inserted.count
        return change.updates.allSatisfy { $0.offset >= 0 && $0.offset < count }
    }

    private mutating func problem(_ text: String) {
        // A broken diff breaks every later one: the first problems say it all.
        guard problems.count < 20 else { return }
        problems.append("node \(node), incarnation \(incarnations): \(text)")
    }
}
