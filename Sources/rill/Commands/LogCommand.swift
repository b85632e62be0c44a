import Foundation
import Rill
import RillStorage

/// `rill log`: the store's commits as JSON lines.
struct LogCommand: Command {
    let description = CommandDescription(
        name: "log",
        abstract: "Print the commits of a store's log, one JSON object per line.",
        arguments: [.init(name: "store", help: "The store directory.")],
        options: [
            .init(
                name: "since", valueName: "seq", help: "Start after this sequence number (default: 0, the beginning)."),
            .init(name: "limit", valueName: "n", help: "Print at most this many commits."),
        ],
        discussion: """
            Each line: {"seq":N,"timestamp":"…","author":…,"changes":[{"op":"insert|update|delete",
            "entity":"…","id":…,"fields":[…],"record":{…}}]}. "fields" (updates only) names the
            fields that changed; deletes carry no record.
            """
    )

    func run(_ arguments: ParsedArguments, output: inout Output) throws -> Int32 {
        let since = try arguments.integer("since") ?? 0
        var remaining = try arguments.integer("limit") ?? Int.max
        let store = try openStore(arguments.positionals[0])
        var after = UInt64(since)
        while remaining > 0 {
            let batch = try store.entries(after: after, limit: min(remaining, 512))
            guard let last = batch.last else { break }
            for entry in batch { output.line(try entry.jsonValue().jsonString()) }
            after = last.sequence
            remaining -= batch.count
        }
        return ExitStatus.success
    }
}

/// Opens an existing store for the CLI (never creates one).
func openStore(_ path: String) throws -> Store {
    try Store(directory: path, options: EnvironmentOptions(), create: false)
}
