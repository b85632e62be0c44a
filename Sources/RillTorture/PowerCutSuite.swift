import Foundation
import Rill
import RillWorkloads

#if canImport(Glibc)
    import Glibc
#endif

/// The `power-cut` suite: writers and an observer run under the fault shim's journal; at a random
/// moment every process of the store is killed, and the store is replaced by what a disk could
/// hold after a power cut: everything flushed, plus a random subset of the writes since, torn at
/// 4 KiB boundaries (``PowerCutJournal``). The next cut starts from that image, as a machine
/// would after the reboot.
///
/// Each image is checked by `rill check` in a child process (a damaged image may crash its
/// reader), then by ``StoreVerification``, then against what the writers and the observer were
/// told:
/// - `full`: every acknowledged save is present;
/// - `relaxed`: at most the last commit is undone, never an older one;
/// - `unsynced`: the commits since the last flush may be undone, or the store damaged (see
///   ``ModelConfiguration/Durability/unsynced``).
///
/// In every mode each commit the image holds is whole (each of the writers' saves changes `batch`
/// records, and a commit with fewer is half a save), and the observer heard of no commit the
/// image lacks or holds with other content: observers see durable commits only.
package enum PowerCutSuite {
    /// How many cuts each durability gets.
    static func cuts(_ scale: TortureScale) -> [(durability: String, cuts: Int)] {
        [
            ("full", scale.pick(test: 10, torture: 50)), ("relaxed", scale.pick(test: 3, torture: 20)),
            ("unsynced", scale.pick(test: 3, torture: 20)),
        ]
    }

    package static func run(_ options: TortureOptions) throws -> TortureReport {
        var report = TortureReport(suite: "power-cut", seed: options.seed)
        guard FileManager.default.fileExists(atPath: options.product("libRillFaultShim.so")) else {
            report.skipped = "libRillFaultShim.so is not built (swift build --product RillFaultShim)"
            return report
        }
        var random = SeededGenerator(seed: options.seed)
        var tally = Tally()
        for (durability, cuts) in cuts(options.scale) {
            let started = Date()
            try runCuts(cuts, durability: durability, options: options, random: &random, report: &report, tally: &tally)
            tally.seconds.append(Date().timeIntervalSince(started))
        }
        report.add("journal equal to the file", "\(tally.journalMatches)/\(report.faults)")
        report.add("unsynced pieces kept", "\(tally.keptPieces)/\(tally.pieces)")
        report.add("commits checked", tally.commits)
        report.add("observed commits", tally.observed)
        for (durability, figures) in tally.byDurability {
            report.add(
                "\(durability)",
                "undone \(figures.undone) of \(figures.acknowledged) acknowledged, "
                    + "observed-then-undone \(figures.observedUndone), damaged \(figures.damaged) of \(figures.cuts)")
        }
        report.add("seconds by durability", tally.seconds.map { String(format: "%.0f", $0) }.joined(separator: "/"))
        for (kind, count) in tally.damage.prefix(5) { report.add("damage", "\(count)× \(kind)") }
        if report.passed {
            try? FileManager.default.removeItem(at: options.workDirectory.appendingPathComponent("power-cut"))
        }
        return report
    }

    struct Tally {
        struct Figures {
            var cuts = 0
            var acknowledged = 0
            var undone = 0
            var observedUndone = 0
            var damaged = 0
        }
        var journalMatches = 0
        var keptPieces = 0
        var pieces = 0
        var commits = 0
        var observed = 0
        /// What `rill check` said of the damaged images, each kind once (with how many).
        var damage: [(String, Int)] = []
        var byDurability: [(String, Figures)] = []
        var seconds: [Double] = []
    }

    static func runCuts(
        _ cuts: Int, durability: String, options: TortureOptions, random: inout SeededGenerator,
        report: inout TortureReport, tally: inout Tally
    ) throws {
        let base = options.workDirectory.appendingPathComponent("power-cut").appendingPathComponent(durability)
        let batch = 3
        var figures = Tally.Figures()
        var previous: URL?
        // The saves the store must still hold: every acknowledged one not undone as the mode allows.
        var expected: [AcknowledgedSave] = []
        for number in 0..<cuts {
            let directory = base.appendingPathComponent("cut-\(number)")
            let store = directory.appendingPathComponent("store")
            try FileManager.default.createDirectory(at: store, withIntermediateDirectories: true)
            if let previous {
                try FileManager.default.copyItem(
                    at: previous.appendingPathComponent("data.mdb"), to: store.appendingPathComponent("data.mdb"))
            } else {
                try create(store, options: options)
                expected = []
            }
            let startHead = try head(of: store)
            let cut = PowerCut(
                options: options, directory: directory, durability: durability, writers: 2, batch: batch,
                payload: 16...6000, runTime: options.scale.pick(test: 0.05...0.4, torture: 0.1...1.0),
                observes: durability == "full" || number % 2 == 0)
            let outcome = try cut.run(number: number, using: &random)
            report.faults += 1
            figures.cuts += 1
            report.acknowledged += outcome.acknowledged.count
            figures.acknowledged += outcome.acknowledged.count
            tally.journalMatches += outcome.journalMatchesFile ? 1 : 0
            tally.keptPieces += outcome.keptPieces
            tally.pieces += outcome.pieces
            tally.observed += outcome.observed.observations.count
            let moment = "\(durability) cut \(number)"
            if !outcome.journalMatchesFile {
                report.problems.append("\(moment): synced + journal differs from the file: the shim missed a write")
            }
            // A damaged image must not take the suite down with it: `rill check` reads it first, apart.
            if let damage = damage(of: outcome.image, options: options) {
                let kind = String(damage.replacingOccurrences(of: outcome.image.path, with: "<image>").prefix(160))
                if let index = tally.damage.firstIndex(where: { $0.0 == kind }) {
                    tally.damage[index].1 += 1
                } else {
                    tally.damage.append((kind, 1))
                }
                if durability == "unsynced" {
                    figures.damaged += 1
                    previous = nil
                    continue
                }
                report.problems.append("\(moment): the image is damaged: \(damage)")
                previous = nil
                continue
            }
            let imageHead = try head(of: outcome.image)
            let acknowledgedHead = outcome.acknowledged.map(\.sequence).max() ?? startHead
            let undone = outcome.acknowledged.filter { $0.sequence > imageHead }
            figures.undone += undone.count
            switch durability {
            case "full":
                report.lost += undone.count
            case "relaxed":
                if imageHead + 1 < acknowledgedHead {
                    report.problems.append(
                        "\(moment): commits up to \(acknowledgedHead) were acknowledged, the image ends at \(imageHead): "
                            + "more than the last save undone")
                }
            default:
                if imageHead < startHead {
                    report.problems.append(
                        "\(moment): the image ends at \(imageHead), before the flushed commit \(startHead)")
                }
            }
            expected = (expected + outcome.acknowledged).filter { $0.sequence <= imageHead }
            report.record(StoreVerification.verify(directory: outcome.image.path, acknowledged: expected), at: moment)
            let imageStore = try Store(directory: outcome.image.path, options: StoreOptions(), create: false)
            let (wholeness, commits) = try halfSaves(in: imageStore, after: startHead, batch: batch)
            tally.commits += commits
            report.record(wholeness, at: moment)
            let (observerProblems, lacking) = try outcome.observed.check(against: imageStore)
            figures.observedUndone += lacking.count
            report.record(observerProblems, at: moment)
            // In full durability LMDB shows readers a commit only once its meta page's synchronous
            // write returned; in the other modes an observer flushes the file before it tells.
            report.record(Array(lacking.prefix(1)), at: moment)
            previous = outcome.image
        }
        tally.byDurability.append((durability, figures))
    }

    /// Makes the store of the first cut, flushed (it is what the disk holds when the run starts).
    static func create(_ store: URL, options: TortureOptions) throws {
        let run = try WorkerRun.run(
            options.product("rill-torture"), ["worker", "writer", store.path, "0", "--saves", "0"])
        guard run.status == 0 else { throw TortureUsage("cannot create the store \(store.path)") }
        try? FileManager.default.removeItem(at: store.appendingPathComponent("lock.mdb"))
    }

    static func head(of store: URL) throws -> UInt64 {
        try Store(directory: store.path, options: StoreOptions(), create: false).head()
    }

    /// Why `rill check` finds the image damaged (its output, or the signal that killed it); nil
    /// when the image opens and checks clean.
    static func damage(of image: URL, options: TortureOptions) -> String? {
        let run: WorkerRun
        do {
            run = try WorkerRun.run(
                options.product("rill"), ["check", image.path], environment: ["SWIFT_BACKTRACE": "enable=no"])
        } catch {
            return "rill check does not start: \(error)"
        }
        let text = run.standardError + run.standardOutput
        try? FileManager.default.removeItem(at: image.appendingPathComponent("lock.mdb"))
        if let signal = run.signal {
            let said = text.split(separator: "\n").first.map { ": \($0)" } ?? ""
            return "rill check died of signal \(signal)\(said)"
        }
        guard run.status == 0 else {
            return text.split(separator: "\n").prefix(3).joined(separator: " / ")
        }
        return nil
    }

    /// The commits after `start` that are not whole saves (each save changes `batch` records),
    /// and how many commits were checked.
    static func halfSaves(in store: Store, after start: UInt64, batch: Int) throws -> ([String], Int) {
        var problems: [String] = []
        var count = 0
        try store.read { snapshot in
            try store.log.forEachEntry(after: start, in: snapshot) { entry in
                count += 1
                if entry.changes.count != batch {
                    problems.append("commit \(entry.sequence) holds \(entry.changes.count) changes, not \(batch)")
                }
                return true
            }
        }
        return (problems, count)
    }
}
