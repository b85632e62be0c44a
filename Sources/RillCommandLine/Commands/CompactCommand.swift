import Foundation
import Rill

/// `rill compact`: the log before a commit folded into a snapshot, and the file shrunk.
struct CompactCommand: Command {
    let description = CommandDescription(
        name: "compact",
        abstract: "Fold the log before a commit into a snapshot, drop those commits, and shrink the file.",
        arguments: CompactOptions.arguments,
        options: CompactOptions.options,
        discussion: """
            --before S folds commits 1…S-1 into a snapshot of the state after commit S-1, the
            log's new horizon, and drops them, in one write transaction; with a date, the commits
            made before it. Every answer about the horizon or a later commit stays the same:
            history after it, queries as of it or later, watches and subscriptions resuming from
            it, rill check and rill rebuild (which start from the snapshot). Earlier ones are
            refused with historyCompacted, naming the horizon. The log's last commit is always
            kept. A durable subscription registered in the store is never passed: compacting
            beyond the last commit one has processed is refused (historyRetained), naming it.

            Then, unless --keep-file, data.mdb is replaced by a compacted copy (LMDB never
            shrinks its file). That needs every other process to have closed the store: each
            process holds a shared lock on lock.mdb while the store is open, and the copy is
            renamed over data.mdb only under the exclusive lock. When a process has it open, the
            file is left as it is (its free pages are reused by later saves) and the command
            says so; run it again later, --before the same commit, to shrink the file.
            """,
        examples: [
            "rill compact ./books --before 2026-01-01T00:00:00Z",
            "rill compact --keep-file --json --before 1200 ./books",
        ]
    )

    func run(_ options: CompactOptions, output: inout Output) throws -> Int32 {
        let report = try compactLog(options)
        var rewrite: StoreFileRewrite?
        // Every handle on the store is closed by now: this process holds no lock of it.
        if !options.keepFile { rewrite = try Store.reclaimSpace(directory: options.store) }
        if options.json {
            var fields = [
                RecordField(name: "horizon", value: .uint(report.horizon)),
                RecordField(name: "droppedCommits", value: .int(Int64(report.droppedCommits))),
                RecordField(name: "snapshotRecords", value: .int(Int64(report.snapshotRecords))),
                RecordField(name: "firstCommit", value: .uint(report.firstRetained)),
                RecordField(name: "lastCommit", value: .uint(report.head)),
            ]
            switch rewrite {
            case .rewritten(let before, let after)?:
                fields.append(RecordField(name: "fileBytesBefore", value: .int(Int64(before))))
                fields.append(RecordField(name: "fileBytesAfter", value: .int(Int64(after))))
            case .busy?: fields.append(RecordField(name: "fileRewritten", value: .bool(false)))
            case nil: break
            }
            output.line(RecordValue.map(fields).jsonString())
            return ExitStatus.success
        }
        if report.droppedCommits == 0 {
            output.line(
                "nothing to fold: the log's horizon is commit \(report.horizon); it holds commits "
                    + "\(report.firstRetained)…\(report.head)")
        } else {
            output.line(
                "folded \(report.droppedCommits) commits into a snapshot of \(report.snapshotRecords) records: "
                    + "the horizon is commit \(report.horizon), the log holds commits \(report.firstRetained)…\(report.head)"
            )
        }
        switch rewrite {
        case .rewritten(let before, let after)?:
            output.line("data.mdb: \(Output.byteCount(before)) → \(Output.byteCount(after))")
        case .busy?:
            output.line(
                "data.mdb was not shrunk: another process has the store open (its free pages are reused by later "
                    + "saves); run rill compact again once it is closed")
        case nil: break
        }
        return ExitStatus.success
    }

    /// The compaction, with the store open only for it.
    private func compactLog(_ options: CompactOptions) throws -> StoreCompactionReport {
        let store = try openStore(options.store)
        let sequence = try store.read { snapshot -> UInt64 in
            switch options.before {
            case .sequence(let sequence): return sequence
            case .date(let date):
                // Those made before the date are folded.
                return try store.log.firstSequence(madeAtOrAfter: date, in: snapshot)
            }
        }
        return try store.compact(before: sequence)
    }
}
