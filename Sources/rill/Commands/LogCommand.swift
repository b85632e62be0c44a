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
        let watcher = follow ? StoreFileWatcher(directory: store.directory) : nil
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

/// Waits for a store file to change: inotify on `data.mdb`, with a poll every second as a bound.
final class StoreFileWatcher {
    private let fd: Int32

    init(directory: String) {
        let fd = inotify_init1(Int32(IN_CLOEXEC))
        if fd >= 0, inotify_add_watch(fd, directory + "/data.mdb", UInt32(IN_MODIFY)) < 0 {
            close(fd)
            self.fd = -1
        } else {
            self.fd = fd
        }
    }

    deinit { if fd >= 0 { close(fd) } }

    /// Returns after the file changed, or after a second.
    func wait() {
        guard fd >= 0 else {
            usleep(100_000)
            return
        }
        var descriptor = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
        guard poll(&descriptor, 1, 1_000) > 0 else { return }
        var buffer = [UInt8](repeating: 0, count: 4096)
        _ = buffer.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
    }
}

/// Opens an existing store for the CLI (never creates one). A command that only reads says so,
/// and can then read a store the process may not write (see `Environment`).
func openStore(_ path: String, readOnly: Bool = false) throws -> Store {
    try Store(directory: path, options: EnvironmentOptions(readOnly: readOnly), create: false)
}
