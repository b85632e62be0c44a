import Foundation
import Rill

/// `rill log`: the store's commits as JSON lines.
struct LogCommand: Command {
    let description = CommandDescription(
        name: "log",
        abstract: "Print the commits of a store's log, one JSON object per line.",
        arguments: LogOptions.arguments,
        options: LogOptions.options,
        discussion: """
            Each line: {"seq":N,"timestamp":"…","author":…,"changes":[{"op":"insert|update|delete",
            "entity":"…","id":…,"fields":[…],"record":{…}}]}. "fields" (updates only) names the
            fields that changed; deletes carry no record.

            --since past the log's last commit is an error (status 1) naming that commit, as
            for rill watch --since; --since equal to it prints nothing (or, with --follow, the
            commits that land next).
            """
    )

    func run(_ options: LogOptions, output: inout Output) throws -> Int32 {
        var remaining = options.limit
        let store = try openStore(options.store, readOnly: true)
        var after = options.since
        // As `rill watch --since`: a commit the log has not reached is a mistake, not an empty log.
        let head = try store.head()
        guard after <= head else {
            throw RillError(.misuse, "cannot start after commit \(after): the log's last commit is \(head)")
        }
        let follow = options.follow
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
