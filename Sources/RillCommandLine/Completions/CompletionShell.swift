/// A shell that `rill completions` writes a completion script for.
enum CompletionShell: String, CaseIterable, Sendable {
    case bash
    case zsh
    case fish

    /// The shells' names, as the usage error and the help list them: `bash, zsh or fish`.
    static let names = allCases.map(\.rawValue).dropLast().joined(separator: ", ") + " or " + allCases.last!.rawValue

    /// The shell named `name`.
    ///
    /// - Throws: `UsageError` naming the shells there are, for any other name.
    init(named name: String) throws {
        guard let shell = Self(rawValue: name) else {
            throw UsageError("rill completions knows \(Self.names); got '\(name)'")
        }
        self = shell
    }

    /// The completion script of `commands` for this shell.
    func script(for commands: [CommandDescription]) -> String {
        let words = CompletionWords(commands)
        return switch self {
        case .bash: BashCompletionScript(words).text
        case .zsh: ZshCompletionScript(words).text
        case .fish: FishCompletionScript(words).text
        }
    }
}
