import Dispatch
import Foundation
import Rill

/// `rill watch`: a query's results, then every change to them as saves land — from this machine's
/// other processes, through the store file.
struct WatchCommand: Command {
    let description = CommandDescription(
        name: "watch",
        abstract: "Print a query's results, then each change to them as saves land, until interrupted.",
        arguments: [
            .init(name: "store", help: "The store directory (not with --connect).", optionalWith: "connect"),
            .init(name: "query", help: "A query, e.g. 'Book where isRead == false sort by title limit 20'."),
        ],
        options: [
            .init(name: "json", help: "Print NDJSON: the results, then one object per change (see Protocol.md)."),
            .init(
                name: "since", valueName: "seq",
                help: "Resume after this commit: print the changes of every later commit, not the results."),
            .init(
                name: "connect", valueName: "socket|url",
                help: "Watch through `rill serve`: its socket (or store directory), or http://host:port."),
            .init(
                name: "token-file", valueName: "path",
                help: "With --connect over TCP: the bearer token's file (or set RILL_TOKEN)."),
            .init(
                name: "retry",
                help: "With --connect: wait for the daemon when none answers, and reconnect whenever it goes away."),
        ],
        discussion: """
            On a terminal, the results are a table; after each commit that changes them, the
            table again with its rows marked: + inserted, - removed, ~ updated, > moved (colors
            on a terminal unless NO_COLOR is set). Results over \(TerminalRendering.fullTableLimit) rows show the changed
            rows only. Ctrl-C (SIGINT) or SIGTERM ends the watch at once with status 0, even
            when its reader has stopped reading; the lines written are whole, except the one
            being written when its output was blocked.

            With --connect, no daemon answering at the address is a failure (status 1) unless
            --retry is given. A connection that drops after the stream started is connected
            again once at once, resuming after the last commit received (nothing lost or
            repeated); when that fails too, the watch ends with status 1. With --retry it keeps
            trying, every few seconds at most, until the daemon answers.

            --json prints one JSON object per line: first {"seq":N,"results":[…]} (not with
            --since), then for each commit that changed the results
            {"seq":N,"removals":[…],"insertions":[…],"moves":[…],"updates":[…]}; each entry
            has its offset(s), "id" and "record". `--since` with a "seq" printed earlier resumes
            with no change lost or repeated; a "seq" past the log's last commit is an error
            (status 1), as for rill log --since.
            """
    )

    func run(_ arguments: ParsedArguments, output: inout Output) throws -> Int32 {
        let text = arguments.positionals.last!
        guard let query = parseQueryArgument(text) else { return ExitStatus.usage }
        let since = try arguments.integer("since").map(UInt64.init)
        let rendering: any WatchRendering =
            arguments.has("json") ? JSONRendering() : TerminalRendering(colors: Terminal.wantsColors)
        if arguments.has("retry"), arguments.value("connect") == nil {
            throw UsageError("--retry is for --connect: a watch of a store directory does not connect")
        }
        if let connect = arguments.value("connect") {
            guard arguments.positionals.count == 1 else {
                throw UsageError("give either a store or --connect, not both")
            }
            guard let address = EventStreamClient.address(connect) else {
                throw UsageError(
                    "--connect takes a socket path, a store directory or http://host:port; got '\(connect)'")
            }
            return try watchRemotely(
                address: address, query: text, since: since,
                token: ServeCommand.token(file: arguments.value("token-file")), retrying: arguments.has("retry"),
                rendering: rendering)
        }
        let store = try openStore(arguments.positionals[0], readOnly: true)
        guard try store.entity(named: query.entity) != nil else { throw try store.unknownEntityError(query.entity) }
        // A query that does not fit the entity fails at once (the live query would refuse it too).
        guard try reportingBadQuery({ try store.check(query) }) != nil else { return ExitStatus.usage }
        Terminal.endOnInterrupt()
        // The tables show the results, so a resumed watch starts from the results at `since`.
        let live = try RecordLiveQuery(
            query, store: store, since: since, reportingResultsAtSince: rendering is TerminalRendering
        ) { event in
            let text: String
            switch event {
            case .initial(let rows, let sequence): text = rendering.results(rows, sequence: sequence)
            case .change(let change): text = rendering.change(change)
            case .failed(let error):
                Output.error("the watch stopped: \(error.message)")
                exit(ExitStatus.failure)
            }
            Terminal.write(text)
        }
        withExtendedLifetime(live) { dispatchMain() }
    }

    /// `--connect`: the same output, from the daemon's event stream.
    private func watchRemotely(
        address: SocketAddress, query: String, since: UInt64?, token: String?, retrying: Bool,
        rendering: any WatchRendering
    ) throws -> Int32 {
        Terminal.endOnInterrupt()
        let worker = Thread {
            var client = EventStreamClient(
                address: address, query: query, token: token, lastEventID: since.map(String.init), retrying: retrying)
            do {
                try client.run { event in
                    if rendering is JSONRendering, ["results", "reset", "change"].contains(event.name) {
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
                        Output.error("the watch stopped: \(event.data)")
                        exit(ExitStatus.failure)
                    default:
                        break
                    }
                }
            } catch let refused as EventStreamClient.Refused {
                Output.error(refused.message)
                exit(refused.status == 400 ? ExitStatus.usage : ExitStatus.failure)
            } catch {
                Output.error("\(error)")
                exit(ExitStatus.failure)
            }
        }
        worker.start()
        dispatchMain()
    }
}
