/// What every completion script offers, whatever its shell: the commands with their abstracts,
/// and the words `rill` answers before a command (`help`, `version`, `--help`, `--version`).
struct CompletionWords: Sendable {
    var commands: [CommandDescription]
    /// The words that are not commands, with what they do.
    var general: [(name: String, abstract: String)] = Commands.generalWords

    init(_ commands: [CommandDescription]) { self.commands = commands }

    /// The options every command takes besides its own.
    static let helpOption = CommandDescription.Option(name: "help", help: "Show help information.")

    /// The command's options, then `--help`.
    func options(of command: CommandDescription) -> [CommandDescription.Option] {
        command.options + [Self.helpOption]
    }

    /// The names after `rill`: the commands, then the general words.
    var names: [String] { commands.map(\.name) + general.map(\.name) }
}
