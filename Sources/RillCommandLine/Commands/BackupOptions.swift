/// What `rill backup` is given.
struct BackupOptions: CommandOptions {
    static let store = CommandDescription.Argument(
        name: "store", help: "The store directory to copy.", completion: .directory)
    static let destination = CommandDescription.Argument(
        name: "destination", help: "A directory that does not exist or is empty; the copy becomes its data.mdb.",
        completion: .directory)

    static let arguments = [store, destination]
    static let options: [CommandDescription.Option] = []

    /// The store directory to copy.
    var store: String
    /// Where the copy goes.
    var destination: String

    init(_ arguments: ParsedArguments) {
        store = arguments[Self.store]
        destination = arguments[Self.destination]
    }
}
