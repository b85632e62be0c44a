import Rill

/// Every `rill` command, in the order the overview lists them.
///
/// A type's static rather than a global of `main.swift`: those are set only when the program's
/// top-level code runs, and the tests read the list without running it.
enum Commands {
    static let all: [any Command] = [
        QueryCommand(), WatchCommand(), WriteCommand(operation: .insert), WriteCommand(operation: .update),
        WriteCommand(operation: .delete), ImportCommand(), ExportCommand(), LogCommand(), GetCommand(),
        StatsCommand(), SchemaCommand(), CheckCommand(), RebuildCommand(), CompactCommand(), BackupCommand(),
        RestoreCommand(),
        ServeCommand(), CompletionsCommand(),
    ]

    /// The words read before a command: they are not commands, but `rill` answers them.
    static let generalWords: [(name: String, abstract: String)] = [
        ("help", "Show this overview, or a command's help: rill help <command> (= rill <command> --help)."),
        ("version", "Print rill's version (also rill --version)."),
    ]
}
