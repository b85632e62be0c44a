/// What `rill export` is given.
struct ExportOptions: CommandOptions {
    static let store = CommandDescription.Argument.store

    static let arguments = [store]
    static let options: [CommandDescription.Option] = []

    /// The store directory.
    var store: String
    /// The entities to export, by name, in order; empty for all of them.
    var entities: [String]

    init(_ arguments: ParsedArguments) {
        store = arguments[Self.store]
        entities = arguments.trailing
    }
}
