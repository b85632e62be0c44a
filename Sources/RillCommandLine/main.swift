// `rill`: the command-line face of Rill. Thin: parses arguments and calls the library.
import Foundation
import Rill

let commands = Commands.all

let generalWords = Commands.generalWords

let overview = """
    rill — an event-sourced store with live queries.

    USAGE: rill <command> [options] <arguments>

    COMMANDS:
    \((commands.map { ($0.description.name, $0.description.abstract) } + generalWords).map { "  " + $0.0.padding(toLength: 13, withPad: " ", startingAt: 0) + $0.1 }.joined(separator: "\n"))

    Run 'rill help <command>' or 'rill <command> --help' for a command's options.
    Exit status: 0 success, 1 failure, 64 bad usage.
    """

/// The command named `name`, or nil after saying on standard error that there is none, with
/// the closest name there is.
func command(named name: String) -> (any Command)? {
    if let command = commands.first(where: { $0.description.name == name }) { return command }
    let candidates =
        name.hasPrefix("-")
        ? ["--help", "--version"] : commands.map(\.description.name) + generalWords.map(\.name)
    let suggestion = NameSuggestion.closest(to: name, among: candidates).map { "; did you mean '\($0)'?" } ?? ""
    Output.error("unknown \(name.hasPrefix("-") ? "option" : "command") '\(name)'\(suggestion)\nSee 'rill help'.")
    return nil
}

/// `rill help [command]`.
func help(_ words: [String]) -> Int32 {
    guard let name = words.first else {
        print(overview)
        return ExitStatus.success
    }
    guard words.count == 1 else {
        Output.error("unexpected argument '\(words[1])'\nUSAGE: rill help [<command>]")
        return ExitStatus.usage
    }
    if generalWords.contains(where: { $0.name == name }) {
        print(overview)
        return ExitStatus.success
    }
    guard let command = command(named: name) else { return ExitStatus.usage }
    print(command.description.help)
    return ExitStatus.success
}

/// The words of the command line after the program's name, read from its bytes, and the
/// positions of those that are not valid UTF-8. `CommandLine.arguments` would have replaced
/// their bad bytes with U+FFFD, silently storing other text than the one given.
func commandLineWords() -> (words: [String], malformed: Set<Int>) {
    var words: [String] = []
    var malformed: Set<Int> = []
    for index in 1..<max(1, Int(CommandLine.argc)) {
        guard let raw = CommandLine.unsafeArgv[index] else { continue }
        if let text = String(validatingCString: raw) {
            words.append(text)
        } else {
            malformed.insert(words.count)
            words.append(String(cString: raw))
        }
    }
    return (words, malformed)
}

func main() -> Int32 {
    let (words, malformed) = commandLineWords()
    guard let name = words.first else {
        Output.error("missing command\n\n" + overview)
        return ExitStatus.usage
    }
    switch name {
    case "--help", "-h", "help":
        return help(Array(words.dropFirst()))
    case "--version", "version":
        guard words.count == 1 else {
            Output.error("unexpected argument '\(words[1])'\nUSAGE: rill version")
            return ExitStatus.usage
        }
        print("rill \(RillVersion.current)")
        return ExitStatus.success
    default:
        break
    }
    guard let command = command(named: name) else { return ExitStatus.usage }
    let arguments: ParsedArguments
    do {
        arguments = try command.description.parse(
            Array(words.dropFirst()), malformed: Set(malformed.map { $0 - 1 }))
    } catch let error as UsageError {
        Output.error("\(error.message)\nUSAGE: \(command.description.usage)\nSee 'rill help \(name)'.")
        return ExitStatus.usage
    } catch {
        Output.error("\(error)")
        return ExitStatus.usage
    }
    if arguments.wantsHelp {
        print(command.description.help)
        return ExitStatus.success
    }
    var output = Output()
    do {
        let status = try command.run(arguments, output: &output)
        output.flush()
        return status
    } catch let error as UsageError {
        output.flush()
        Output.error("\(error.message)\nUSAGE: \(command.description.usage)")
        return ExitStatus.usage
    } catch let error as RillError {
        output.flush()
        // The tool never makes a store by accident (a mistyped path): say what does.
        let hint =
            error.code == .storeNotFound && name != "import"
            ? "\n(a store is made by `rill import`, `rill restore`, `rill serve --log` or a program's ModelContainer)"
            : ""
        Output.error(error.message + hint)
        return ExitStatus.failure
    } catch {
        output.flush()
        Output.error("\(error)")
        return ExitStatus.failure
    }
}

// A reader on a closed pipe (`rill log … | head`) must end quietly, not die of SIGPIPE.
signal(SIGPIPE, SIG_IGN)
// A parent may have left SIGINT and SIGTERM blocked; Ctrl-C and `kill` must reach every command.
var interrupts = sigset_t()
sigemptyset(&interrupts)
sigaddset(&interrupts, SIGINT)
sigaddset(&interrupts, SIGTERM)
pthread_sigmask(SIG_UNBLOCK, &interrupts, nil)
exit(main())
