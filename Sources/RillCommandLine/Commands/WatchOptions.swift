import Rill
import RillClient
import RillHTTP

/// What `rill watch` is given.
struct WatchOptions: CommandOptions {
    /// Where the watch reads its changes from.
    enum Source {
        /// A store directory on this machine, through its file.
        case store(String)
        /// A daemon (`rill serve`), through its event stream.
        case daemon(SocketAddress)
    }

    static let store = CommandDescription.Argument(
        name: "store", help: "The store directory (not with --connect).", optionalWith: "connect",
        completion: .directory)
    static let query = CommandDescription.Argument(
        name: "query", help: "A query, e.g. 'Book where isRead == false sort by title limit 20'.")
    static let json = Flag("json", help: "Print NDJSON: the results, then one object per change (see Protocol.md).")
    static let since = ValueOption.wholeNumber(
        "since", valueName: "seq",
        help: "Resume after this commit: print the changes of every later commit, not the results.")
    static let from = ValueOption.logPosition(
        "from",
        help: "Replay the log from this commit or date: its results, then each later change up to --to; then exit.")
    static let to = ValueOption.logPosition(
        "to",
        help: "The last commit (or date) to replay (default: the log's last); alone, replays from 0, the empty store.")
    static let connect = ValueOption(
        "connect", valueName: "socket|url",
        help: "Watch through `rill serve`: its socket (or store directory), or http://host:port."
    ) { text in
        guard let address = EventStreamClient.address(text) else {
            throw UsageError("--connect takes a socket path, a store directory or http://host:port; got '\(text)'")
        }
        return address
    }
    .completing(.file)
    static let tokenFile = ValueOption(
        "token-file", valueName: "path", help: "With --connect over TCP: the bearer token's file (or set RILL_TOKEN)."
    )
    .completing(.file)
    static let progress = ValueOption.seconds(
        "progress", valueName: "seconds",
        help: "With --json: print {\"seq\":N} when commits went by without changing the results and nothing "
            + "was printed for this long (default: 5; 0: never).",
        orZero: true)
    static let retry = Flag(
        "retry", help: "With --connect: wait for the daemon when none answers, and reconnect whenever it goes away.")

    static let arguments = [store, query]
    static let options = [
        json.option, since.option, from.option, to.option, progress.option, connect.option, tokenFile.option,
        retry.option,
    ]

    /// The commits a bounded replay (`--from`, `--to`) runs between.
    struct Replay: Equatable {
        /// The commit (or date: the last commit made at or before it) whose results are printed
        /// first; commit 0, the empty store, when only `--to` is given.
        var from: LogPosition
        /// The last commit (or date) whose change is printed; nil for the log's last commit.
        var to: LogPosition?
    }

    /// The query, parsed before anything else is checked.
    var query: QueryArgument
    /// The commit to resume after; nil to start with the results.
    var since: UInt64?
    /// A replay of the log between two commits, then the end (not live); nil to watch live.
    var replay: Replay?
    /// NDJSON, not tables.
    var json: Bool
    /// The interval of progress lines, when given (only with `--json`; 0: never).
    var progress: Double?
    /// Wait for the daemon, and reconnect (only with `--connect`).
    var retry: Bool
    var source: Source
    /// The bearer token's file, for a daemon over TCP.
    var tokenFile: String?

    init(_ arguments: ParsedArguments) throws {
        query = try QueryArgument(arguments[Self.query])
        since = try arguments[Self.since].map(UInt64.init)
        let from = try arguments[Self.from]
        let to = try arguments[Self.to]
        if from != nil || to != nil {
            let given = [
                arguments.text(of: Self.from).map { "--from \($0)" }, arguments.text(of: Self.to).map { "--to \($0)" },
            ].compactMap { $0 }.joined(separator: " ")
            if let since {
                throw UsageError(
                    "--since \(since) resumes a live watch and \(given) replays a range, then ends: give one or the other"
                )
            }
            if arguments.text(of: Self.connect) != nil {
                throw UsageError("\(given) replays the store's own log: give the store directory, not --connect")
            }
            let backwards: Bool =
                switch (from, to) {
                case (.sequence(let start)?, .sequence(let end)?): start > end
                case (.date(let start)?, .date(let end)?): start > end
                default: false
                }
            if backwards {
                throw UsageError(
                    "--from \(arguments.text(of: Self.from)!) is after --to \(arguments.text(of: Self.to)!): "
                        + "a replay runs forward, from the earlier commit")
            }
            replay = Replay(from: from ?? .sequence(0), to: to)
        }
        json = arguments[Self.json]
        progress = try arguments[Self.progress]
        if progress != nil, !json {
            throw UsageError("--progress is for --json: the tables print only the changes")
        }
        if progress != nil, replay != nil {
            throw UsageError("--progress is for a live watch: a replay of a range prints its changes, then ends")
        }
        retry = arguments[Self.retry]
        let connecting = arguments.text(of: Self.connect) != nil
        if retry, !connecting {
            throw UsageError("--retry is for --connect: a watch of a store directory does not connect")
        }
        if connecting {
            guard arguments[optional: Self.store] == nil else {
                throw UsageError("give either a store or --connect, not both")
            }
        }
        if let address = try arguments[Self.connect] {
            source = .daemon(address)
        } else {
            source = .store(arguments[Self.store])
        }
        tokenFile = try arguments[Self.tokenFile]
    }
}
