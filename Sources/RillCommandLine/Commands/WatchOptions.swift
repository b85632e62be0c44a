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
        name: "store", help: "The store directory (not with --connect).", optionalWith: "connect")
    static let query = CommandDescription.Argument(
        name: "query", help: "A query, e.g. 'Book where isRead == false sort by title limit 20'.")
    static let json = Flag("json", help: "Print NDJSON: the results, then one object per change (see Protocol.md).")
    static let since = ValueOption.wholeNumber(
        "since", valueName: "seq",
        help: "Resume after this commit: print the changes of every later commit, not the results.")
    static let connect = ValueOption(
        "connect", valueName: "socket|url",
        help: "Watch through `rill serve`: its socket (or store directory), or http://host:port."
    ) { text in
        guard let address = EventStreamClient.address(text) else {
            throw UsageError("--connect takes a socket path, a store directory or http://host:port; got '\(text)'")
        }
        return address
    }
    static let tokenFile = ValueOption(
        "token-file", valueName: "path", help: "With --connect over TCP: the bearer token's file (or set RILL_TOKEN).")
    static let progress = ValueOption.seconds(
        "progress", valueName: "seconds",
        help: "With --json: print {\"seq\":N} when commits went by without changing the results and nothing "
            + "was printed for this long (default: 5; 0: never).",
        orZero: true)
    static let retry = Flag(
        "retry", help: "With --connect: wait for the daemon when none answers, and reconnect whenever it goes away.")

    static let arguments = [store, query]
    static let options = [json.option, since.option, progress.option, connect.option, tokenFile.option, retry.option]

    /// The query, parsed before anything else is checked.
    var query: QueryArgument
    /// The commit to resume after; nil to start with the results.
    var since: UInt64?
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
        json = arguments[Self.json]
        progress = try arguments[Self.progress]
        if progress != nil, !json {
            throw UsageError("--progress is for --json: the tables print only the changes")
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
