/// A query on the command line that does not parse: the command says "bad query" with the
/// parser's message and exits with the usage status (`Command.run(_:output:)`).
struct BadQueryArgument: Error, CustomStringConvertible {
    /// The parser's error: its message shows where in the text the query went wrong.
    var error: any Error

    var description: String { "bad query\n\(error)" }
}
