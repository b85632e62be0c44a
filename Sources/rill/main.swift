// `rill`: the command-line face of Rill. Thin: parses arguments and calls the library.
import Foundation
import Rill

let commands: [any Command] = [
    QueryCommand(), WatchCommand(), WriteCommand(operation: .insert), WriteCommand(operation: .update),
    WriteCommand(operation: .delete), ImportCommand(), ExportCommand(), LogCommand(), GetCommand(), StatsCommand(),
    CheckCommand(), ServeCommand(),
]

let overview = """
    rill — an event-sourced store with live queries.

    USAGE: rill <command> [options] <arguments>

    COMMANDS:
    \(commands.map { "  " + $0.description.name.padding(toLength: 10, withPad: " ", startingAt: 0) + $0.description.abstract }.joined(separator: "\n"))

    Run 'rill <command> --help' for a command's options.
    Exit status: 0 success, 1 failure, 64 bad usage.
    """

func main() -> Int32 {
    let words = Array(CommandLine.arguments.dropFirst())
    guard let name = words.first else {
        Output.error("missing command\n\n" + overview)
        return ExitStatus.usage
    }
    if name == "--help" || name == "-h" || name == "help" {
        if words.count > 1, let command = commands.first(where: { $0.description.name == words[1] }) {
            print(command.description.help)
        } else {
            print(overview)
        }
        return ExitStatus.success
    }
    guard let command = commands.first(where: { $0.description.name == name }) else {
        Output.error("unknown command '\(name)'\n\n" + overview)
        return ExitStatus.usage
    }
    let arguments: ParsedArguments
    do {
        arguments = try command.description.parse(Array(words.dropFirst()))
    } catch let error as UsageError {
        Output.error("\(error.message)\nUSAGE: \(command.description.usage)\nSee 'rill \(name) --help'.")
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
        Output.error(error.message)
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
