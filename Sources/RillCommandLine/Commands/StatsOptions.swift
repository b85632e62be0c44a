import RillClient
import RillHTTP

/// What `rill stats` is given.
struct StatsOptions: CommandOptions {
    static let store = CommandDescription.Argument.store
    static let json = Flag("json", help: "Print one JSON object instead of text.")
    static let url = ValueOption(
        "url", valueName: "socket|url",
        help: "Also read the figures of the daemon serving the store: its socket (or store directory), "
            + "or http://host:port (GET /metrics)."
    ) { text in
        guard let address = EventStreamClient.address(text) else {
            throw UsageError("--url takes a socket path, a store directory or http://host:port; got '\(text)'")
        }
        return address
    }
    .completing(.file)
    static let tokenFile = ValueOption(
        "token-file", valueName: "path", help: "With --url over TCP: the bearer token's file (or set RILL_TOKEN)."
    )
    .completing(.file)

    static let arguments = [store]
    static let options = [json.option, url.option, tokenFile.option]

    /// The store directory.
    var store: String
    /// One JSON object, not text.
    var json: Bool
    /// The daemon to read `/metrics` of, when asked.
    var daemon: SocketAddress?
    /// The token's file, for a daemon over TCP.
    var tokenFile: String?

    init(_ arguments: ParsedArguments) throws {
        store = arguments[Self.store]
        json = arguments[Self.json]
        daemon = try arguments[Self.url]
        tokenFile = try arguments[Self.tokenFile]
    }
}
