import Foundation
import Rill

/// `rill check`: the store against a replay of its log.
struct CheckCommand: Command {
    let description = CommandDescription(
        name: "check",
        abstract: "Verify that the records and indexes equal a replay of the log; exit 1 with a report when not.",
        arguments: CheckOptions.arguments,
        options: CheckOptions.options,
        discussion: """
            Replays every commit from the first, in one snapshot, and compares the result with
            every entity's records and every index; also checks that the log has no gap and
            every entry reads. Holds the replayed records in memory.
            """
    )

    func run(_ options: CheckOptions, output: inout Output) throws -> Int32 {
        let store = try openStore(options.store, readOnly: true)
        let report = try store.check()
        if options.json {
            let value = RecordValue.map([
                RecordField(name: "healthy", value: .bool(report.isHealthy)),
                RecordField(name: "commits", value: .int(Int64(report.commits))),
                RecordField(name: "records", value: .int(Int64(report.records))),
                RecordField(name: "indexKeys", value: .int(Int64(report.indexKeys))),
                RecordField(name: "problems", value: .array(report.problems.map { .string($0) })),
                RecordField(name: "unreported", value: .int(Int64(report.unreported))),
            ])
            output.line(value.jsonString())
        } else {
            output.line(
                "checked \(report.commits) commits, \(report.records) records, \(report.indexKeys) index keys")
            if report.isHealthy {
                output.line("ok: the records and indexes equal a replay of the log")
            } else {
                for problem in report.problems { output.line("problem: \(problem)") }
                if report.unreported > 0 { output.line("and \(report.unreported) more problems") }
            }
        }
        return report.isHealthy ? ExitStatus.success : ExitStatus.failure
    }
}
