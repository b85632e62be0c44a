/// What `rill completions` is given.
struct CompletionsOptions: CommandOptions {
    static let shell = CommandDescription.Argument(
        name: "shell", help: "The shell to write the script for: \(CompletionShell.names).",
        completion: .choices(CompletionShell.allCases.map(\.rawValue)))

    static let arguments = [shell]
    static let options: [CommandDescription.Option] = []

    /// The shell the script is for.
    var shell: CompletionShell

    init(_ arguments: ParsedArguments) throws {
        shell = try CompletionShell(named: arguments[Self.shell])
    }
}
