/// What a command is given, as a typed value: decoded once from its command line, before the
/// command runs, so that the command reads properties, never names or positions.
///
/// The type declares its arguments and options (`CommandDescription.Argument`, `Flag`,
/// `ValueOption`) as static members, and the command's description lists them: each name is
/// written once, and the help shows what the decoding reads.
protocol CommandOptions {
    /// The arguments, in their order on the command line.
    static var arguments: [CommandDescription.Argument] { get }
    /// The options, in the order the help lists them.
    static var options: [CommandDescription.Option] { get }

    /// Decodes the options from a command line that matched the command's description, checking
    /// their values in the order the command has always checked them.
    ///
    /// - Throws: `UsageError` for a value an option does not take or options that do not go
    ///   together; `BadQueryArgument` for a query that does not parse.
    init(_ arguments: ParsedArguments) throws
}
