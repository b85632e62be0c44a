/// What `rill log` is given.
struct LogOptions: CommandOptions {
    static let store = CommandDescription.Argument.store
    static let since = ValueOption.wholeNumber(
        "since", valueName: "seq", help: "Start after this sequence number (default: 0, the beginning).")
    static let limit = ValueOption.wholeNumber("limit", valueName: "n", help: "Print at most this many commits.")
    static let follow = Flag("follow", help: "Keep printing commits as they land, until interrupted (exit 0).")

    static let arguments = [store]
    static let options = [since.option, limit.option, follow.option]

    /// The store directory.
    var store: String
    /// The commit to start after; 0, the beginning, when not given.
    var since: UInt64
    /// The most commits to print; `Int.max` when not given.
    var limit: Int
    /// Keep printing commits as they land.
    var follow: Bool

    init(_ arguments: ParsedArguments) throws {
        since = UInt64(try arguments[Self.since] ?? 0)
        limit = try arguments[Self.limit] ?? Int.max
        store = arguments[Self.store]
        follow = arguments[Self.follow]
    }
}
