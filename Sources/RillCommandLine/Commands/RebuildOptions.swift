/// What `rill rebuild` is given.
struct RebuildOptions: CommandOptions {
    static let store = CommandDescription.Argument.store
    static let json = Flag("json", help: "Print what was rebuilt as JSON.")

    static let arguments = [store]
    static let options = [json.option]

    /// The store directory.
    var store: String
    /// The summary as JSON, not text.
    var json: Bool

    init(_ arguments: ParsedArguments) {
        store = arguments[Self.store]
        json = arguments[Self.json]
    }
}
