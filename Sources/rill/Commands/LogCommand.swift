import Foundation
import Rill

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
            .init(name: "follow", help: "Keep printing commits as they land, until interrupted (exit 0)."),
        ],
        discussion: """
            Each line: {"seq":N,"timestamp":"…","author":…,"changes":[{"op":"insert|update|delete",
            "entity":"…","id":…,"fields":[…],"record":{…}}]}. "fields" (updates only) names the
            fields that changed; deletes carry no record.

            --since past the log's last commit is an error (status 1) naming that commit, as
            for rill watch --since; --since equal to it prints nothing (or, with --follow, the
            commits that land next).
            """
    )

    func run(_ arguments: ParsedArguments, output: inout Output) throws -> Int32 {
        let since = try arguments.integer("since") ?? 0
        var remaining = try arguments.integer("limit") ?? Int.max
        let store = try openStore(arguments.positionals[0], readOnly: true)
        var after = UInt64(since)
        // As `rill watch --since`: a commit the log has not reached is a mistake, not an empty log.
        let head = try store.head()
        guard after <= head else {
            throw RillError(.misuse, "cannot start after commit \(after): the log's last commit is \(head)")
        }
        let follow = arguments.has("follow")
        let watcher = follow ? try store.log.watch() : nil
        if follow {
            // Output is flushed before each wait, and lines are written whole: end at once.
            signal(SIGINT) { _ in _exit(ExitStatus.success) }
            signal(SIGTERM) { _ in _exit(ExitStatus.success) }
        }
        while remaining > 0 {
            let batch = try store.entries(after: after, limit: min(remaining, 512))
            guard let last = batch.last else {
                guard let watcher else { break }
                output.flush()
                watcher.wait()
                continue
            }
            for entry in batch { output.line(try entry.jsonValue().jsonString()) }
            after = last.sequence
            remaining -= batch.count
        }
        return ExitStatus.success
    }
}
