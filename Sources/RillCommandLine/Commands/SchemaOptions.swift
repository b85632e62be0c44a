/// What `rill schema` is given.
struct SchemaOptions: CommandOptions {
    static let store = CommandDescription.Argument.store
    static let json = Flag("json", help: "Print the schemas as JSON.")

    static let arguments = [store]
    static let options = [json.option]

    /// The store directory.
    var store: String
    /// The entities to show, by name, in order; empty for all of them.
    var entities: [String]
    /// JSON, not text.
    var json: Bool

    init(_ arguments: ParsedArguments) {
        store = arguments[Self.store]
        entities = arguments.trailing
        json = arguments[Self.json]
    }
}
