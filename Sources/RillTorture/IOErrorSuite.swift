import Dispatch
import Foundation
import Rill
import RillWorkloads
import Synchronization

/// The `io-error` suite: the Nth write or flush of the store file fails, for every N.
///
/// For each operation (`pwrite`, `fdatasync`, `fsync`) and each N (1…300 at `.torture`, a spread
/// sample at `.test`), a writer process runs under the fault shim (`RILL_FAULT_FAIL=<op>:<N>`) on
/// a copy of a prepared store: the Nth call of that operation on `data.mdb` fails with `EIO`
/// without running. The writer reports each acknowledged save (`ack`) and each failed one
/// (`error <code> <message>`), and goes on for three saves after the failure. Then:
///
/// - the failed save got the typed error its write calls for: `storeFailed` naming `EIO` and the
///   commit when the meta page's write failed (LMDB's `MDB_PANIC`), `diskFull` for a data page's
///   write or a flush;
/// - saves went on after it in the same process (the store reopened its files by itself);
/// - nothing acknowledged is missing, nothing unacknowledged was committed (except, at most, the
///   save whose meta-page write failed: its outcome is "not acknowledged", not "absent"), and the
///   store opens and passes `StoreVerification`.
///
/// LMDB flushes `data.mdb` with `fdatasync` and writes meta pages through an `O_DSYNC`
/// descriptor; it calls `fsync` only in configurations Rill does not use. So `fsync` is probed
/// once (N = 1 over a run of saves): when it fires, the whole range runs for it too.
package enum IOErrorSuite {
    package static func run(_ options: TortureOptions) throws -> TortureReport {
        var report = TortureReport(suite: "io-error", seed: options.seed)
        let shim = options.product("libRillFaultShim.so")
        guard FileManager.default.fileExists(atPath: shim) else {
            throw TortureUsage("the fault shim is not built: \(shim) (swift build --product RillFaultShim)")
        }
        let work = try options.directory("io-error")
        let template = work.appendingPathComponent("template")
        let prepared = try WorkerRun.run(
            options.product("rill-torture"), ["worker", "writer", template.path, "0", "--saves", "20"], in: work)
        guard prepared.status == 0 else {
            throw TortureUsage("preparing the store failed: \(prepared.standardError)")
        }
        let base = prepared.lines.compactMap(TortureWriter.acknowledged)
        var random = SeededGenerator(seed: options.seed)
        var tally = Tally()
        for operation in ["pwrite", "fdatasync", "fsync"] {
            var counts = Self.counts(options.scale, using: &random)
            if operation == "fsync" {
                let probe = try runOnce(
                    operation, 1, saves: 40, template: template, base: base, work: work, options: options, into: &report
                )
                tally.add(probe)
                report.add("fsync calls seen", probe.fired ? "some" : "none")
                guard probe.fired else { continue }
                counts.removeAll { $0 == 1 }
            }
            // Runs wait for the disk's flushes, not the processor: several at once keep it busy.
            let (chosen, seed) = (counts, options.seed)
            let runs = try inParallel(chosen.count, width: options.scale.pick(test: 2, torture: 4)) { index in
                var part = TortureReport(suite: "io-error", seed: seed)
                let outcome = try runOnce(
                    operation, chosen[index], saves: chosen[index] + 10, template: template, base: base, work: work,
                    options: options, into: &part)
                return (outcome, part)
            }
            for (outcome, part) in runs {
                tally.add(outcome)
                report.faults += part.faults
                report.acknowledged += part.acknowledged
                report.lost += part.lost
                report.problems += part.problems
            }
        }
        report.add("runs", tally.runs)
        report.add("meta-page failures (storeFailed)", tally.metaFailures)
        report.add("data or flush failures (diskFull)", tally.dataFailures)
        report.add("saves after the failure", tally.savesAfter)
        report.add("failed saves found committed", tally.committedAnyway)
        report.add("N past the calls made", tally.notReached)
        if report.passed { try? FileManager.default.removeItem(at: work) }
        return report
    }

    /// Runs `body` for 0..<count, `width` at a time, and returns the results in order; throws the
    /// first error any threw.
    static func inParallel<R: Sendable>(
        _ count: Int, width: Int, _ body: @escaping @Sendable (Int) throws -> R
    ) throws -> [R] {
        let next = Atomic<Int>(0)
        let results = Mutex<[Int: Result<R, any Error>]>([:])
        let group = DispatchGroup()
        for _ in 0..<width {
            DispatchQueue.global().async(group: group) {
                while true {
                    let index = next.add(1, ordering: .relaxed).oldValue
                    guard index < count else { return }
                    let result = Result { try body(index) }
                    results.withLock { $0[index] = result }
                }
            }
        }
        group.wait()
        return try results.withLock { results in try (0..<count).map { try results[$0]!.get() } }
    }

    /// The N of each operation: every one of 1…300 at `.torture`; at `.test` the first few
    /// (the first commit's writes), then a random spread up to 300.
    static func counts(_ scale: TortureScale, using random: inout SeededGenerator) -> [Int] {
        switch scale {
        case .torture: return Array(1...300)
        case .test:
            let spread = (0..<10).map { band in Int.random(in: (11 + band * 29)...(39 + band * 29), using: &random) }
            return Array(1...10) + spread
        }
    }

    /// What one run found, for the suite's figures.
    struct Outcome {
        var fired = false
        var metaFailure = false
        var savesAfter = 0
        var committedAnyway = false
    }

    struct Tally {
        var runs = 0
        var metaFailures = 0
        var dataFailures = 0
        var savesAfter = 0
        var committedAnyway = 0
        var notReached = 0

        mutating func add(_ outcome: Outcome) {
            runs += 1
            if !outcome.fired {
                notReached += 1
            } else if outcome.metaFailure {
                metaFailures += 1
            } else {
                dataFailures += 1
            }
            savesAfter += outcome.savesAfter
            if outcome.committedAnyway { committedAnyway += 1 }
        }
    }

    /// One writer run with the Nth `operation` failing, and its checks.
    static func runOnce(
        _ operation: String, _ count: Int, saves: Int, template: URL, base: [AcknowledgedSave], work: URL,
        options: TortureOptions, into report: inout TortureReport
    ) throws -> Outcome {
        let name = "\(operation)-\(count)"
        let moment = "\(operation) #\(count)"
        let store = work.appendingPathComponent(name)
        try FileManager.default.createDirectory(at: store, withIntermediateDirectories: true)
        try FileManager.default.copyItem(
            at: template.appendingPathComponent("data.mdb"), to: store.appendingPathComponent("data.mdb"))
        let run = try WorkerRun.run(
            options.product("rill-torture"),
            [
                "worker", "writer", store.path, "1", "--saves", "\(saves)", "--after-error", "3", "--seed",
                "\(count)",
            ],
            environment: [
                "LD_PRELOAD": options.product("libRillFaultShim.so"), "RILL_FAULT_FILES": "/\(name)/data.mdb",
                "RILL_FAULT_FAIL": "\(operation):\(count)",
            ], in: work)
        var outcome = Outcome()
        let fault = run.standardError.split(separator: "\n").first { $0.hasPrefix("rill-fault: failed") }
        outcome.fired = fault != nil
        if outcome.fired { report.faults += 1 }
        if run.status != 0 {
            report.problems.append("\(moment): the writer exited with status \(run.status): \(run.standardError)")
        }
        let acknowledged = run.lines.compactMap(TortureWriter.acknowledged)
        report.acknowledged += acknowledged.count
        let errors = run.lines.enumerated().filter { $0.element.hasPrefix("error ") }
        // A data page's write is whole pages; the meta page's is the meta record alone.
        let bytes = fault.flatMap { line in
            line.split(separator: "(").last?.split(separator: " ").first.flatMap { Int($0) }
        }
        outcome.metaFailure = operation == "pwrite" && (bytes ?? 4096) < 4096
        if let fault {
            if errors.count != 1 {
                report.problems.append(
                    "\(moment): \(errors.count) saves failed after one failed call (\(fault)): "
                        + errors.map(\.element).joined(separator: " | "))
            }
            if let (index, line) = errors.first {
                checkError(line, metaFailure: outcome.metaFailure, moment: moment, into: &report)
                outcome.savesAfter = run.lines[(index + 1)...].filter { $0.hasPrefix("ack ") }.count
                if outcome.savesAfter == 0 {
                    report.problems.append("\(moment): no save succeeded after the failed one")
                }
            }
        } else if !errors.isEmpty {
            report.problems.append(
                "\(moment): saves failed with no injected fault: \(errors.map(\.element).joined(separator: " | "))")
        }
        let sequences = acknowledged.map(\.sequence)
        if Set(sequences).count != sequences.count {
            report.problems.append("\(moment): a commit was acknowledged twice")
        }
        let found = StoreVerification.verify(directory: store.path, acknowledged: base + acknowledged)
        report.lost += found.filter { $0.contains("acknowledged") }.count
        report.record(found, at: moment)
        let extra = try unacknowledgedCommits(in: store.path, base: base.count + acknowledged.count)
        if extra > (outcome.metaFailure ? 1 : 0) {
            report.problems.append("\(moment): \(extra) commits are in the log that no save acknowledged")
        }
        outcome.committedAnyway = extra > 0
        if report.passed { try? FileManager.default.removeItem(at: store) }
        return outcome
    }

    /// Checks that a failed save's error is the typed one its failed write calls for.
    static func checkError(_ line: Substring, metaFailure: Bool, moment: String, into report: inout TortureReport) {
        let fields = line.split(separator: " ", maxSplits: 2)
        let code = fields.count > 1 ? String(fields[1]) : ""
        let message = fields.count > 2 ? String(fields[2]) : ""
        if metaFailure {
            if code != RillError.Code.storeFailed.name || !message.contains("EIO")
                || !message.contains("would have been commit") || !message.contains("reopened its files")
            {
                report.problems.append(
                    "\(moment): a failed meta-page write gave \(code) (\(message)), not storeFailed naming EIO, "
                        + "the commit and the reopening")
            }
        } else if code != RillError.Code.diskFull.name || !message.contains("Input/output error") {
            report.problems.append("\(moment): a failed data write or flush gave \(code) (\(message)), not diskFull")
        }
    }

    /// How many commits the log holds beyond the `acknowledged` ones.
    static func unacknowledgedCommits(in directory: String, base acknowledged: Int) throws -> Int {
        let store = try Store(directory: directory, options: StoreOptions(), create: false)
        return Int(try store.head()) - acknowledged
    }
}
