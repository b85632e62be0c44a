import Rill

/// What `rill query` is given.
struct QueryOptions: CommandOptions {
    static let store = CommandDescription.Argument.store
    static let query = CommandDescription.Argument(
        name: "query", help: "A query, e.g. 'Book where pages > 300 sort by title limit 10'.")
    static let json = Flag("json", help: "Print one JSON object per record (NDJSON) instead of a table.")
    static let csv = Flag("csv", help: "Print CSV (RFC 4180: a header row, CRLF line ends) instead of a table.")
    static let explain = Flag("explain", help: "Print how the query would run instead of its results.")
    static let asOf = ValueOption.logPosition(
        "as-of", help: "Print the results as they were after this commit, or at this date (default: now).")

    static let arguments = [store, query]
    static let options = [json.option, csv.option, explain.option, asOf.option]

    /// The store directory.
    var store: String
    /// The query, parsed before the store is opened.
    var query: QueryArgument
    /// NDJSON, not a table.
    var json: Bool
    /// CSV, not a table.
    var csv: Bool
    /// The plan, not the results.
    var explain: Bool
    /// The point in the past to read the results at; nil for now.
    var asOf: LogPosition?

    init(_ arguments: ParsedArguments) throws {
        query = try QueryArgument(arguments[Self.query])
        store = arguments[Self.store]
        json = arguments[Self.json]
        csv = arguments[Self.csv]
        explain = arguments[Self.explain]
        if json, csv {
            throw UsageError("--json and --csv are two ways to print the results: give one")
        }
        if explain, json || csv {
            throw UsageError(
                "--explain prints how the query runs, as text: it does not take --\(json ? "json" : "csv")")
        }
        asOf = try arguments[Self.asOf]
        if explain, asOf != nil {
            throw UsageError("--explain prints how the query runs now: it does not take --as-of")
        }
    }
}
