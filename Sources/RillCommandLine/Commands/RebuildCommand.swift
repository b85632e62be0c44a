import Foundation
import Rill

/// `rill rebuild`: every entity's records and every index rebuilt from the log.
struct RebuildCommand: Command {
    let description = CommandDescription(
        name: "rebuild",
        abstract: "Rebuild every entity's records and every index from the log.",
        arguments: RebuildOptions.arguments,
        options: RebuildOptions.options,
        discussion: """
            Replays every commit from the first into the records, then builds every index from
            them, in one write transaction: readers see the old state until it commits, writers
            wait for it. The log and the catalog stay as they are. The file may need room for a
            second copy of the records and indexes until the commit. A log that does not read
            whole is an error, and nothing is written.
            """,
        examples: [
            "rill rebuild ./books",
            "rill rebuild --json ./books",
        ]
    )

    func run(_ options: RebuildOptions, output: inout Output) throws -> Int32 {
        let store = try openStore(options.store)
        let report = try store.rebuild(progress: StoreProgressBar.handlerIfTerminal())
        if options.json {
            let value = RecordValue.map([
                RecordField(name: "commits", value: .int(Int64(report.commits))),
                RecordField(name: "entities", value: .int(Int64(report.entities))),
                RecordField(name: "records", value: .int(Int64(report.records))),
                RecordField(name: "indexEntries", value: .int(Int64(report.indexEntries))),
            ])
            output.line(value.jsonString())
        } else {
            output.line(
                "rebuilt \(report.entities) entities, \(report.records) records, \(report.indexEntries) index entries "
                    + "from \(report.commits) commits")
        }
        return ExitStatus.success
    }
}
