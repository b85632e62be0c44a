/// What `rill import` is given.
struct ImportOptions: CommandOptions {
    static let store = CommandDescription.Argument(
        name: "store", help: "The store directory (created when missing).", completion: .directory)
    static let file = ValueOption("file", valueName: "path", help: "Read this file instead of standard input.")
        .completing(.file)
    static let author = ValueOption(
        "author", valueName: "name", help: "The author recorded in the commit (default: none).")

    static let arguments = [store]
    static let options = [file.option, author.option]

    /// The store directory.
    var store: String
    /// The file to read; nil for standard input.
    var file: String?
    /// The author recorded in the commit.
    var author: String?

    init(_ arguments: ParsedArguments) throws {
        store = arguments[Self.store]
        file = try arguments[Self.file]
        author = try arguments[Self.author]
    }
}
