/// What `rill insert`, `rill update` and `rill delete` are given.
struct WriteOptions: CommandOptions {
    static let store = CommandDescription.Argument.store
    static let entity = CommandDescription.Argument(
        name: "entity", help: "The entity (the model type's name, e.g. Book).")
    static let author = ValueOption(
        "author", valueName: "name", help: "The author recorded in the commit (default: none).")

    static let arguments = [store, entity]
    static let options = [author.option]

    /// The store directory.
    var store: String
    /// The entity's name: the one each item is of unless it names its own.
    var entity: String
    /// The records, fields or ids, as given; empty to read them from standard input.
    var items: [String]
    /// The author recorded in the commit.
    var author: String?

    init(_ arguments: ParsedArguments) throws {
        store = arguments[Self.store]
        entity = arguments[Self.entity]
        items = arguments.trailing
        author = try arguments[Self.author]
    }
}
