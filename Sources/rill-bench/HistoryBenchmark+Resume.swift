import Dispatch
import Foundation
import Rill

extension HistoryBenchmark {
    /// Resuming live queries `distance` commits back beside starting the same live query afresh,
    /// back to back: `LiveQuery(_:in:since:)` until its first observer has received the catch-up
    /// change, and `RecordLiveQuery(since:)` (the per-commit replay of `rill watch --since` and of
    /// the daemon's `Last-Event-ID`) until its handler has been told of the last commit.
    func resume(_ container: ModelContainer, head: UInt64, distances: [Int]) throws -> ComparisonTable {
        let store = container.store
        let top = topOfBoard
        let topText = try QueryParser.parse(Self.topOfBoardText)
        let queue = DispatchQueue(label: "rill-bench.history.observers")
        // Held throughout, so that no measure starts or stops the store's log follower.
        let keeper = try LiveQuery(FetchDescriptor<Player>(predicate: #Predicate { $0.code < 0 }), in: container)

        // A released query is let go on the follower thread, after whatever it was doing: a job
        // queued behind that (`catchUp`) returns once it is gone, so the next measure does not
        // wait for it. The pause lets memory freed on other threads settle.
        func settle() throws {
            try keeper.catchUp()
            usleep(10_000)
        }
        func resumed(since token: HistoryToken) throws -> Double {
            let seconds = try {
                let delivered = DispatchSemaphore(value: 0)
                let start = now()
                let live = try LiveQuery(top, in: container, since: token)
                let observation = live.observe(on: queue) { change in
                    precondition(change.sequence == head, "the catch-up change is not at the head")
                    delivered.signal()
                }
                // Every commit since the token changed the top 50: the catch-up change is never empty.
                let outcome = withExtendedLifetime(live) { delivered.wait(timeout: .now() + 600) }
                precondition(outcome == .success, "no catch-up change")
                let seconds = now() - start
                observation.cancel()
                return seconds
            }()
            try settle()
            return seconds
        }
        func started() throws -> Double {
            let seconds = try {
                let start = now()
                let live = try LiveQuery(top, in: container)
                let observation = live.observe(on: queue) { _ in }
                let seconds = now() - start
                withExtendedLifetime(live) { observation.cancel() }
                return seconds
            }()
            try settle()
            return seconds
        }
        func replayed(since sequence: UInt64?) throws -> Double {
            let seconds = try measure {
                let live = try RecordLiveQuery(topText, store: store, since: sequence) { _ in }
                try live.catchUp()
            }
            try settle()
            return seconds
        }

        var table = ComparisonTable(
            title: "resumed live query beside the same query started afresh", baselineName: "fresh")
        table.rillName = "resumed"
        // For each measure, its cost per commit back at the longer distances, beyond its cost 1 commit back.
        var perCommit: [(name: String, oneBack: Double, figures: [String])] = []
        for distance in distances {
            let token = HistoryToken(sequence: head - UInt64(distance))
            let measures: [(String, () throws -> Double, () throws -> Double)] = [
                (
                    "LiveQuery(_:in:since:) → catch-up observed, top 50", { try resumed(since: token) },
                    { try started() }
                ),
                (
                    "RecordLiveQuery(since:), per-commit replay, top 50", { try replayed(since: token.sequence) },
                    { try replayed(since: nil) }
                ),
            ]
            for (name, resuming, starting) in measures {
                let samples = try PairedSamples.collect(resuming, baseline: starting)
                table.rows.append(
                    .init(
                        name: "\(name), \(distance) commit\(distance == 1 ? "" : "s") back",
                        rill: Self.milliseconds(samples.medianMeasured),
                        baseline: Self.milliseconds(samples.medianBaseline), unit: "ms", higherIsBetter: false,
                        target: "reported", ratio: samples.medianRatio))
                if distance == 1 { perCommit.append((name, samples.medianMeasured, [])) }
                if distance >= 10_000, let index = perCommit.firstIndex(where: { $0.name == name }) {
                    let microseconds = (samples.medianMeasured - perCommit[index].oneBack) / Double(distance - 1) * 1e6
                    perCommit[index].figures.append(String(format: "%.2f µs at %d", microseconds, distance))
                }
            }
        }
        withExtendedLifetime(keeper) {}
        table.note =
            "ratio: median over pairs of resumed ÷ fresh, back to back (at least 3 pairs and 0.3 s a row); fresh: "
            + "LiveQuery(_:in:) and its first observer added, or RecordLiveQuery without since until caught up\n"
            + "cost per commit back, (resumed at the distance − resumed 1 back) ÷ (distance − 1):"
            + perCommit.filter { !$0.figures.isEmpty }.map { "\n  \($0.name): \($0.figures.joined(separator: ", "))" }
            .joined()
        return table
    }
}
