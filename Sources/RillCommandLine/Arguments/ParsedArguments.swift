/// A command line that matched a `CommandDescription`: its words sorted into arguments, option
/// values and flags, still as text.
///
/// Only a command's options value reads it (`CommandOptions`), through the declarations of its
/// arguments and options, so that each name is written once, where it is declared and described.
struct ParsedArguments: Sendable {
    /// The described arguments given, by name (one that may be left out is absent when it was).
    var arguments: [String: String] = [:]
    /// The words after the described arguments: the description's `trailing` items.
    var trailing: [String] = []
    var values: [String: String] = [:]
    var flags: Set<String> = []
    var wantsHelp = false
    /// The names of the options the description has: reading another is a mistake in the
    /// command's declarations, not something the command line can cause.
    var declared: Set<String> = []

    init(declared: Set<String> = []) { self.declared = declared }

    /// The argument's word. The description requires it, so it is there.
    subscript(argument: CommandDescription.Argument) -> String {
        guard let word = arguments[argument.name] else {
            preconditionFailure("<\(argument.name)> is not an argument the description requires")
        }
        return word
    }

    /// An argument that may be left out (`optionalWith`): its word, or nil when it was left out.
    subscript(optional argument: CommandDescription.Argument) -> String? { arguments[argument.name] }

    /// Whether the flag was given.
    subscript(flag: Flag) -> Bool {
        checkDeclared(flag.name)
        return flags.contains(flag.name)
    }

    /// The option's value, decoded; nil when the option was not given.
    ///
    /// - Throws: `UsageError` when the option does not take the value given.
    subscript<Value>(option: ValueOption<Value>) -> Value? {
        get throws {
            guard let text = text(of: option) else { return nil }
            return try option.decode(text)
        }
    }

    /// The text given to the option, as it was given; nil when the option was not given.
    func text<Value>(of option: ValueOption<Value>) -> String? {
        checkDeclared(option.name)
        return values[option.name]
    }

    private func checkDeclared(_ name: String) {
        precondition(declared.contains(name), "--\(name) is not an option of the command's description")
    }
}
