/// What `rill get` is given.
struct GetOptions: CommandOptions {
    static let store = CommandDescription.Argument.store
    static let entity = CommandDescription.Argument(
        name: "entity", help: "The entity name (the model type's name, e.g. Book).")
    static let id = CommandDescription.Argument(
        name: "id", help: "The identifier: a number, a string or a UUID, as the entity uses.")
    static let pretty = Flag("pretty", help: "Indent the JSON.")

    static let arguments = [store, entity, id]
    static let options = [pretty.option]

    /// The store directory.
    var store: String
    /// The entity's name.
    var entity: String
    /// The identifier's text: its kind is the entity's, known once the store is open.
    var id: String
    /// Indented JSON.
    var pretty: Bool

    init(_ arguments: ParsedArguments) {
        store = arguments[Self.store]
        entity = arguments[Self.entity]
        id = arguments[Self.id]
        pretty = arguments[Self.pretty]
    }
}
