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
            fields that changed; deletes carry no record. With --before-after an update also has
            "before" and "after", each the changed fields with their values on that side (null
            where a field is absent), and a delete has "before", the record as it was.

            --since and --until take a sequence number (after it, and up to it included) or an
            ISO-8601 date (2026-03-01T12:00:00Z, or 2026-03-01 for midnight UTC: the commits made
            at or after it, and at or before it). With --entity, a commit shows only the changes
            of those entities, and one without any is left out; --author keeps the commits saved
            by those authors. An entity the store does not have is an error (status 1) naming
            those it has.

            --since past the log's last commit is an error (status 1) naming that commit, as
            for rill watch --since; --since equal to it prints nothing (or, with --follow, the
            commits that land next).
            """,
        examples: [
            "rill log ./books --limit 10 --reverse",
            "rill log ./books --since 2026-01-01T00:00:00Z --entity Book --before-after",
            "rill log ./books --follow",
        ]
    )

    func run(_ options: LogOptions, output: inout Output) throws -> Int32 {
        var remaining = options.limit
        let store = try openStore(options.store, readOnly: true)
        // An entity the store does not have is a mistake, as in a query, not an empty history.
        try store.requireEntities(options.entities)
        var descriptor = HistoryDescriptor(entityNames: options.entities, authors: options.authors)
        // Without --since, from the beginning: the first commit, or the horizon of a compacted log.
        var after: UInt64 = try store.read { try store.log.horizon(in: $0)?.sequence ?? 0 }
        switch options.since {
        case .sequence(let sequence)?:
            // As `rill watch --since`: a commit the log has not reached is a mistake, not an empty log.
            let head = try store.head()
            guard sequence <= head else {
                throw RillError(.misuse, "cannot start after commit \(sequence): the log's last commit is \(head)")
            }
            after = sequence
        case .date(let date)?: descriptor.since = date
        case nil: break
        }
        switch options.until {
        case .sequence(let sequence)?: descriptor.through = HistoryToken(sequence: sequence)
        case .date(let date)?: descriptor.until = date
        case nil: break
        }
        if options.reverse {
            descriptor.sortOrder = .reverse
            descriptor.after = HistoryToken(sequence: after)
            while remaining > 0 {
                descriptor.fetchLimit = min(remaining, 512)
                let batch = try store.read { try store.history(descriptor, in: $0) }
                for entry in batch { output.line(try entry.jsonValue(beforeAfter: options.beforeAfter).jsonString()) }
                guard let last = batch.last, batch.count == descriptor.fetchLimit, last.sequence > after + 1 else {
                    break
                }
                descriptor.through = HistoryToken(sequence: last.sequence - 1)
                remaining -= batch.count
            }
            return ExitStatus.success
        }
        let follow = options.follow
        let watcher = follow ? try store.log.watch() : nil
        if follow {
            // Output is flushed before each wait, and lines are written whole: end at once.
            signal(SIGINT) { _ in _exit(ExitStatus.success) }
            signal(SIGTERM) { _ in _exit(ExitStatus.success) }
        }
        while remaining > 0 {
            descriptor.after = HistoryToken(sequence: after)
            descriptor.fetchLimit = min(remaining, 512)
            // A follower tells only of commits on disk: the flush, when one is due, comes first.
            let (batch, head) = try store.read { snapshot in
                let head = follow ? try store.observableHead(in: snapshot) : try store.log.head(in: snapshot)
                return (try store.history(descriptor, in: snapshot), head)
            }
            for entry in batch { output.line(try entry.jsonValue(beforeAfter: options.beforeAfter).jsonString()) }
            remaining -= batch.count
            if batch.count == descriptor.fetchLimit, let last = batch.last {
                after = last.sequence
                continue
            }
            // The batch covers the log to its head (or to the end given).
            guard let watcher else { break }
            after = max(after, head)
            output.flush()
            watcher.wait()
        }
        return ExitStatus.success
    }
}
