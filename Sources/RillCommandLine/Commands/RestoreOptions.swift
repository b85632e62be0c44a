/// What `rill restore` is given.
struct RestoreOptions: CommandOptions {
    static let backup = CommandDescription.Argument(
        name: "backup", help: "The backup directory (from rill backup).", completion: .directory)
    static let store = CommandDescription.Argument(
        name: "store", help: "Where the store goes: a directory that does not exist or is empty.",
        completion: .directory)

    static let arguments = [backup, store]
    static let options: [CommandDescription.Option] = []

    /// The backup directory.
    var backup: String
    /// Where the restored store goes.
    var store: String

    init(_ arguments: ParsedArguments) {
        backup = arguments[Self.backup]
        store = arguments[Self.store]
    }
}
