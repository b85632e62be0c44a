/// What a shell may offer for an argument or an option's value, in the completion scripts that
/// `rill completions` generates from the command descriptions.
enum CompletionHint: Sendable, Equatable {
    /// Nothing: a query, a number, a name (the shell offers no words).
    case none
    /// Any file (a path to read, a socket).
    case file
    /// A directory (a store, a backup).
    case directory
    /// One of these words.
    case choices([String])
}
