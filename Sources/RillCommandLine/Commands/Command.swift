/// One `rill` subcommand.
protocol Command: Sendable {
    /// What the command is given, decoded from its command line before it runs.
    associatedtype Options: CommandOptions

    var description: CommandDescription { get }
    /// Runs the command; returns the exit status.
    func run(_ options: Options, output: inout Output) throws -> Int32
}

extension Command {
    /// Decodes the command line into the command's options, then runs the command.
    ///
    /// A query that does not parse is reported with the parser's message, which shows where the
    /// query went wrong, instead of the usage; the status is still the usage status.
    func run(_ arguments: ParsedArguments, output: inout Output) throws -> Int32 {
        let options: Options
        do {
            options = try Options(arguments)
        } catch let error as BadQueryArgument {
            Output.error(error.description)
            return ExitStatus.usage
        }
        return try run(options, output: &output)
    }
}
