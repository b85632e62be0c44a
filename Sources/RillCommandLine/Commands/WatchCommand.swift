import Dispatch
import Foundation
import Rill
import RillClient
import RillHTTP
import RillService

/// `rill watch`: a query's results, then every change to them as saves land — from this machine's
/// other processes, through the store file; or, with `--from`/`--to`, the same for a range of
/// commits of the log, replayed, and then the end.
struct WatchCommand: Command {
    let description = CommandDescription(
        name: "watch",
        abstract: "Print a query's results, then each change to them as saves land; or replay a range of the log.",
        arguments: WatchOptions.arguments,
        options: WatchOptions.options,
        discussion: """
            On a terminal (not with --json, TERM set and not dumb), the watch is a full screen
            redrawn in place: a header (the query, the commit "seq N", the rows shown "rows a–b
            of n", and with --connect the connection), the table fitted to the terminal's width
            (columns shrink, values cut with …) and height, then the last change and the keys.
            After each commit that changes the results, its rows are marked: + inserted,
            ~ updated, > moved, the fields that changed highlighted and named after the row,
            "(changed: title, pages)"; removed rows show as - until the next redraw. It follows
            resizes. Keys: space, j or PgDn the next page; b, k or PgUp the previous; g or Home
            the first; G or End the last; ↓ and ↑ a line; q quits (status 0). The terminal is
            left as it was on exit, Ctrl-C, SIGTERM and Ctrl-Z (fg draws it again).

            Piped, the results are a table; after each commit that changes them, the table
            again with its rows marked the same way, - for a removed row; an updated or moved
            row ends with the fields that changed. Results over \(TerminalRendering.fullTableLimit) rows show the changed
            rows only. Ctrl-C (SIGINT) or SIGTERM ends the watch at once with status 0, even
            when its reader has stopped reading; the lines written are whole, except the one
            being written when its output was blocked. A replay (--from, --to) prints this way
            on a terminal too.

            With --connect, no daemon answering at the address is a failure (status 1) unless
            --retry is given. A connection that drops after the stream started is connected
            again once at once, resuming after the last commit received (nothing lost or
            repeated); when that fails too, the watch ends with status 1. With --retry it keeps
            trying, every few seconds at most, until the daemon answers.

            --json prints one JSON object per line: first {"seq":N,"results":[…]} (not with
            --since), then for each commit that changed the results
            {"seq":N,"removals":[…],"insertions":[…],"moves":[…],"updates":[…]}; each entry
            has its offset(s), "id" and "record" (a removal's as it was, the others' as it is
            now); a move or update also has "before", the record as it was. When commits went by
            without changing the results and nothing was printed for --progress seconds (5 by
            default; 0: never), it prints {"seq":N}: the results are as they were up to commit
            N. `--since` with any "seq" printed earlier resumes with no change lost or repeated,
            and from a progress line without going through the commits before it; a "seq" past
            the log's last commit is an error (status 1), as for rill log --since. The tables
            print nothing for commits that leave the results as they were.

            With --from A and/or --to B the watch replays the log instead of following it: the
            results as they were at commit A, printed as a watch prints its first results (the
            table, or {"seq":A,"results":[…]}), then the change of each commit after A up to B
            that changed them, as a live watch prints changes; then it exits with status 0.
            --from alone replays to the log's last commit; --to alone from 0, the empty store.
            A and B are sequence numbers or ISO-8601 dates (the last commit made at or before
            the date; 0 before the first). A after B is a usage error
            (status 64); B past the log's last commit (or A, without --to) is an error (status 1)
            naming it. Not with --since, --progress or --connect.
            """,
        examples: [
            "rill watch ./books 'Book where isRead == false sort by title'",
            "rill watch --json --since 42 ./books 'Book'",
            "rill watch --from 10 --to 20 ./books 'Book'",
            "rill watch --connect ./books --retry 'Book'",
        ]
    )

    func run(_ options: WatchOptions, output: inout Output) throws -> Int32 {
        let query = options.query.query
        let since = options.since
        let rendering: any WatchRendering =
            options.json ? JSONRendering() : TerminalRendering(colors: Terminal.wantsColors)
        // A live table on a terminal is a full screen, redrawn in place; the rest is appended.
        let screen =
            !options.json && options.replay == nil && TerminalScreen.isAvailable
            ? WatchScreenView(query: options.query.text, connecting: options.source.isDaemon) : nil
        let path: String
        switch options.source {
        case .daemon(let address):
            return try watchRemotely(
                address: address, query: options.query.text, since: since, progress: options.progress,
                token: ServeCommand.token(file: options.tokenFile), retrying: options.retry, rendering: rendering,
                screen: screen)
        case .store(let directory):
            path = directory
        }
        let store = try openStore(path, readOnly: true)
        _ = try store.existingEntity(query.entity)
        // A query that does not fit the entity fails at once (the live query would refuse it too).
        guard try reportingBadQuery({ try store.check(query) }) != nil else { return ExitStatus.usage }
        if let range = options.replay {
            // Worked out in one read of the store, then written: no read stays open while the
            // output waits for its reader.
            let (from, to) = try store.read { snapshot in
                (
                    try range.from.sequence(in: store, snapshot: snapshot),
                    try range.to.map { try $0.sequence(in: store, snapshot: snapshot) }
                )
            }
            let replay = try RecordReplay(query, store: store, from: from, to: to)
            output.write(rendering.results(replay.initial, sequence: replay.start))
            for change in replay.changes { output.write(rendering.change(change)) }
            return ExitStatus.success
        }
        Terminal.endOnInterrupt()
        screen?.start()
        let progress = WatchProgress(
            interval: options.json ? options.progress ?? ProgressSchedule.defaultSeconds : nil, sequence: since ?? 0)
        // The tables show the results, so a resumed watch starts from the results at `since`.
        let live = try RecordLiveQuery(
            query, store: store, since: since, reportingResultsAtSince: rendering is TerminalRendering
        ) { event in
            if let screen {
                switch event {
                case .initial(let rows, let sequence): screen.results(rows, sequence: sequence)
                case .change(let change): screen.change(change)
                case .progress: break
                case .failed(let error): Self.fail("the watch stopped: \(error.message)")
                }
                return
            }
            let text: String
            switch event {
            case .initial(let rows, let sequence):
                text = rendering.results(rows, sequence: sequence)
                progress.printed(resultsAt: sequence)
            case .change(let change):
                text = rendering.change(change)
                progress.printed(changeAt: change.sequence)
            case .progress(let sequence):
                guard let json = rendering as? JSONRendering, progress.admits(sequence) else { return }
                text = json.progress(sequence)
            case .failed(let error):
                Self.fail("the watch stopped: \(error.message)")
            }
            Terminal.write(text)
        }
        progress.start(asking: live)
        withExtendedLifetime(live) { dispatchMain() }
    }

    /// `--connect`: the same output, from the daemon's event stream.
    private func watchRemotely(
        address: SocketAddress, query: String, since: UInt64?, progress: Double?, token: String?, retrying: Bool,
        rendering: any WatchRendering, screen: WatchScreenView?
    ) throws -> Int32 {
        Terminal.endOnInterrupt()
        screen?.start()
        let worker = Thread {
            // The daemon's progress events move the resume position of the tables too; they print
            // nothing there. With --progress, the daemon is asked for that interval.
            var client = EventStreamClient(
                address: address, query: query, token: token, lastEventID: since.map(String.init),
                progressSeconds: progress, retrying: retrying,
                notice: { notice in
                    guard let screen else { return Output.error(notice) }
                    screen.connection(notice.hasSuffix("reconnecting") ? "reconnecting" : "no daemon yet, retrying")
                })
            do {
                try client.run { event in
                    if let screen {
                        Self.show(event, on: screen)
                        return
                    }
                    if rendering is JSONRendering, ["results", "reset", "change", "progress"].contains(event.name) {
                        // The stream's data is already the NDJSON line (the same shapes).
                        Terminal.write(event.data + "\n")
                        return
                    }
                    let value = try? JSONReader.parse(Array(event.data.utf8))
                    switch event.name {
                    case "results", "reset":
                        guard let value, let (rows, sequence) = RecordLiveQuery.results(fromJSON: value) else { break }
                        Terminal.write(rendering.results(rows, sequence: sequence))
                    case "change":
                        guard let value, let change = RecordLiveQuery.change(fromJSON: value) else { break }
                        Terminal.write(rendering.change(change))
                    case "error":
                        Self.fail("the watch stopped: \(event.data)")
                    default:
                        break
                    }
                }
            } catch let refused as EventStreamClient.Refused {
                Self.fail(refused.message, status: refused.status == 400 ? ExitStatus.usage : ExitStatus.failure)
            } catch {
                Self.fail("\(error)")
            }
        }
        worker.start()
        dispatchMain()
    }

    /// A daemon's event on the full screen: the results, a change, or the end.
    private static func show(_ event: ServerSentEvent, on screen: WatchScreenView) {
        let value = try? JSONReader.parse(Array(event.data.utf8))
        switch event.name {
        case "results", "reset":
            guard let value, let (rows, sequence) = RecordLiveQuery.results(fromJSON: value) else { break }
            screen.connection("connected")
            screen.results(rows, sequence: sequence)
        case "change":
            guard let value, let change = RecordLiveQuery.change(fromJSON: value) else { break }
            screen.connection("connected")
            screen.change(change)
        case "progress":
            screen.connection("connected")
        case "error":
            fail("the watch stopped: \(event.data)")
        default:
            break
        }
    }

    /// Ends the watch with `message` on standard error, the full screen left first so that the
    /// message stays on the terminal.
    private static func fail(_ message: String, status: Int32 = ExitStatus.failure) -> Never {
        TerminalScreen.leave()
        Output.error(message)
        exit(status)
    }
}

extension WatchOptions.Source {
    /// Whether the watch reads a daemon's stream.
    fileprivate var isDaemon: Bool {
        if case .daemon = self { true } else { false }
    }
}
