/// What `rill stats` is given.
struct StatsOptions: CommandOptions {
    static let store = CommandDescription.Argument.store
    static let json = Flag("json", help: "Print one JSON object instead of text.")

    static let arguments = [store]
    static let options = [json.option]

    /// The store directory.
    var store: String
    /// One JSON object, not text.
    var json: Bool

    init(_ arguments: ParsedArguments) {
        store = arguments[Self.store]
        json = arguments[Self.json]
    }
}
