import Foundation
import Rill
import RillLocks

extension HistoryBenchmark {
    /// The replay rate of `Store.rebuild` and of `rill rebuild`, in changes per second, beside raw
    /// LMDB walking the same log through its C API: decoding nothing, and decoding each entry.
    ///
    /// The raw walks read an exact copy of `data.mdb` (taken while nothing writes): LMDB forbids
    /// opening one file twice in a process, and the copy has the same pages in the same order.
    func replay(_ store: Store, directory: URL, scratch: URL) throws -> ComparisonTable {
        let rawDirectory = scratch.appendingPathComponent("raw")
        try FileManager.default.createDirectory(at: rawDirectory, withIntermediateDirectories: true)
        try Self.copyFile(
            directory.appendingPathComponent("data.mdb").path, to: rawDirectory.appendingPathComponent("data.mdb").path)
        let raw = RawLMDB(directory: rawDirectory.path, mapSize: max(store.fileSize, 1 << 30))

        var entries = 0
        var changes = 0
        try raw.forEach(in: "log") { key, value in
            let entry = try LogEntry(sequence: LogEntry.sequence(fromKey: key), bytes: value)
            entries += 1
            changes += entry.changes.count
        }
        let rill = Self.rillExecutable()

        // Every figure is also taken for the commits after the first `headCount` (the load and
        // the first single-update commits): the rate of a log of small commits.
        let headCount = 1_024
        let tailChanges = entries - headCount
        // The raw walk of every key and value, decoding nothing (the values' sizes are summed so
        // that the walk is not optimized away).
        func walk() -> Phases {
            var bytes = 0
            var count = 0
            var tailStart = 0.0
            let start = now()
            raw.forEach(in: "log") { _, value in
                bytes &+= value.count
                count += 1
                if count == headCount { tailStart = now() }
            }
            let end = now()
            precondition(bytes > 0 && count == entries)
            return Phases(whole: end - start, tail: end - tailStart)
        }
        // The same walk decoding each entry as every reader of the log does.
        func decodingWalk() throws -> Phases {
            var decoded = 0
            var count = 0
            var tailStart = 0.0
            let start = now()
            try raw.forEach(in: "log") { key, value in
                decoded &+= try LogEntry(sequence: LogEntry.sequence(fromKey: key), bytes: value).changes.count
                count += 1
                if count == headCount { tailStart = now() }
            }
            let end = now()
            precondition(decoded == changes)
            return Phases(whole: end - start, tail: end - tailStart)
        }
        // The replay phase of a rebuild, from the progress it reports (at 0, every 1,024 commits,
        // and at the end), and the whole rebuild.
        func rebuild() throws -> (replay: Phases, whole: Double) {
            let marks = Lock<(start: Double, tailStart: Double, end: Double)>((0, 0, 0))
            let start = now()
            let report = try store.rebuild { progress in
                guard progress.phase == .replayingLog else { return }
                let time = now()
                marks.withLock { marks in
                    if progress.completed == 0 { marks.start = time }
                    if progress.completed == headCount { marks.tailStart = time }
                    if progress.isFinished { marks.end = time }
                }
            }
            let whole = now() - start
            precondition(report.commits == entries)
            let marked = marks.withLock { $0 }
            return (Phases(whole: marked.end - marked.start, tail: marked.end - marked.tailStart), whole)
        }
        func command() throws -> Double {
            let process = Process()
            process.executableURL = rill
            process.arguments = ["rebuild", directory.path]
            process.standardOutput = FileHandle.nullDevice
            let seconds = try measure {
                try process.run()
                process.waitUntilExit()
            }
            precondition(process.terminationStatus == 0, "rill rebuild failed")
            return seconds
        }

        var walks: [Phases] = []
        var decodingWalks: [Phases] = []
        var replays: [Phases] = []
        var wholes: [Double] = []
        var commands: [Double] = []
        let rounds = 3
        for round in 0..<rounds {
            // Rebuilds dirty the page cache and the allocator; which comes first turns by round.
            if round.isMultiple(of: 2) {
                walks.append(walk())
                decodingWalks.append(try decodingWalk())
            }
            let (replay, whole) = try rebuild()
            replays.append(replay)
            wholes.append(whole)
            if rill != nil { commands.append(try command()) }
            if !round.isMultiple(of: 2) {
                decodingWalks.append(try decodingWalk())
                walks.append(walk())
            }
        }

        var table = ComparisonTable(
            title:
                "rebuild: \(entries) commits, \(changes) changes (one load of \(records), then \(commits) of 1 update); "
                + "\(rounds) rounds",
            baselineName: "raw LMDB")
        func row(_ name: String, _ seconds: [Double], changes: Int, against baseline: [Double], target: String) {
            let rates = seconds.map { Double(changes) / $0 }
            let baselineRates = baseline.map { Double(changes) / $0 }
            table.rows.append(
                .init(
                    name: name, rill: PairedSamples.median(rates), baseline: PairedSamples.median(baselineRates),
                    unit: "changes/s", higherIsBetter: true, target: target,
                    ratio: PairedSamples.median(zip(rates, baselineRates).map { $0 / $1 })))
        }
        let target = "≥ 300,000/s"
        row(
            "Store.rebuild, replay phase ÷ walk decoding nothing", replays.map(\.whole), changes: changes,
            against: walks.map(\.whole), target: target)
        row(
            "Store.rebuild, replay phase ÷ walk decoding entries", replays.map(\.whole), changes: changes,
            against: decodingWalks.map(\.whole), target: target)
        if tailChanges > 0 {
            row(
                "the same, commits after the first \(headCount) (1 update each)", replays.map(\.tail),
                changes: tailChanges, against: decodingWalks.map(\.tail), target: target)
        }
        row(
            "Store.rebuild, whole: replay, 2 indexes, synced commit ÷ walk decoding entries", wholes, changes: changes,
            against: decodingWalks.map(\.whole), target: "reported")
        if !commands.isEmpty {
            row(
                "rill rebuild, the process, whole ÷ walk decoding entries", commands, changes: changes,
                against: decodingWalks.map(\.whole), target: "reported")
        }
        row(
            "walk decoding entries ÷ walk decoding nothing", decodingWalks.map(\.whole), changes: changes,
            against: walks.map(\.whole), target: "reported")
        table.note =
            "ratio: median over rounds of Rill's rate ÷ the baseline's in the same round; walks: one read "
            + "transaction, a cursor over the log database of an exact copy of data.mdb through the C API, "
            + "decoding nothing or each entry with LogEntry(sequence:bytes:); the replay phase is timed from the "
            + "rebuild's progress reports"
        if rill == nil { table.note! += "\n(rill rebuild not timed: build the rill product beside rill-bench)" }
        return table
    }

    /// The seconds a walk or a replay of the log took: in all, and for the commits after the first 1,024.
    struct Phases {
        var whole: Double
        var tail: Double
    }

    /// The built `rill` beside this executable, when it is there.
    static func rillExecutable() -> URL? {
        let url = URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent()
            .appendingPathComponent("rill")
        return FileManager.default.isExecutableFile(atPath: url.path) ? url : nil
    }
}
