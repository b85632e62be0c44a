/// What `rill check` is given.
struct CheckOptions: CommandOptions {
    static let store = CommandDescription.Argument.store
    static let json = Flag("json", help: "Print the report as JSON.")

    static let arguments = [store]
    static let options = [json.option]

    /// The store directory.
    var store: String
    /// The report as JSON, not text.
    var json: Bool

    init(_ arguments: ParsedArguments) {
        store = arguments[Self.store]
        json = arguments[Self.json]
    }
}
