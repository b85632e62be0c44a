import Rill

/// What a command accepts: its positional arguments, options with values, and flags.
///
/// The description is also the command's help text, so the two cannot drift apart.
struct CommandDescription: Sendable {
    struct Argument: Sendable {
        var name: String
        var help: String
        /// The option that lets the argument be left out (`watch`'s store, with `--connect`); nil
        /// when it is always required. Only leading arguments can be left out: the others keep
        /// their places from the end.
        var optionalWith: String?
        /// What a shell offers for the argument (`rill completions`).
        var completion: CompletionHint = .none

        /// The store directory, the first argument of most commands.
        static let store = Argument(name: "store", help: "The store directory.", completion: .directory)
    }

    struct Option: Sendable {
        var name: String
        var valueName: String?
        var help: String
        /// What a shell offers for the option's value (`rill completions`).
        var completion: CompletionHint = .none

        /// A flag: an option without a value.
        var isFlag: Bool { valueName == nil }
    }

    var name: String
    var abstract: String
    var arguments: [Argument] = []
    var options: [Option] = []
    /// The name of items that may follow the arguments, any number of them (nil: none may).
    var trailing: String?
    var discussion: String?
    /// Command lines that show the command at work, each as a shell would be given it; the tests
    /// parse every one against the description.
    var examples: [String] = []

    var usage: String {
        var parts = ["rill", name]
        parts += options.map { $0.isFlag ? "[--\($0.name)]" : "[--\($0.name) <\($0.valueName!)>]" }
        parts += arguments.map { $0.optionalWith != nil ? "[<\($0.name)>]" : "<\($0.name)>" }
        if let trailing { parts.append("[<\(trailing)> ...]") }
        return parts.joined(separator: " ")
    }

    var help: String {
        var text = "\(abstract)\n\nUSAGE: \(usage)\n"
        if !arguments.isEmpty {
            text += "\nARGUMENTS:\n"
            for argument in arguments { text += Self.row("<\(argument.name)>", argument.help) }
        }
        text += "\nOPTIONS:\n"
        for option in options {
            let label = option.isFlag ? "--\(option.name)" : "--\(option.name) <\(option.valueName!)>"
            text += Self.row(label, option.help)
        }
        text += Self.row("-h, --help", "Show help information.")
        if !options.isEmpty {
            text += "\n  A flag is off unless given; an option left out takes the default its line names, if\n"
            text += "  any, or does not apply.\n"
        }
        if let discussion { text += "\n\(discussion)\n" }
        if !examples.isEmpty {
            text += "\nEXAMPLES:\n"
            for example in examples { text += "  \(example)\n" }
        }
        return text
    }

    private static func row(_ label: String, _ help: String) -> String {
        let padded = label.count < 24 ? label + String(repeating: " ", count: 24 - label.count) : label + "  "
        return "  \(padded)\(help)\n"
    }
}

extension CommandDescription {
    /// Matches `arguments` (the words after the command name) against the description.
    ///
    /// - Parameter malformed: the positions in `arguments` of words whose bytes are not valid
    ///   UTF-8 (decoded with U+FFFD in their place): such a word is refused, named by the
    ///   argument or option it would have been, rather than taken with its bytes replaced.
    func parse(_ arguments: [String], malformed: Set<Int> = []) throws -> ParsedArguments {
        var parsed = ParsedArguments(declared: Set(options.map(\.name)))
        var positionals: [String] = []
        var positionalWords: [Int] = []
        var index = 0
        var onlyPositionals = false
        func refuseIfMalformed(_ position: Int, as name: @autoclosure () -> String) throws {
            guard malformed.contains(position) else { return }
            throw UsageError(
                "\(name()) is not valid UTF-8 (\u{FFFD} marks the bytes that are not): '\(arguments[position])'")
        }
        while index < arguments.count {
            let word = arguments[index]
            index += 1
            // A negative number is an argument where one may go (an id of -5): no option's name
            // starts with a digit.
            let takesPositional = trailing != nil || positionals.count < self.arguments.count
            if onlyPositionals || !word.hasPrefix("-") || word == "-"
                || (takesPositional && Self.isNegativeNumber(word))
            {
                positionals.append(word)
                positionalWords.append(index - 1)
                continue
            }
            if word == "--" {
                onlyPositionals = true
                continue
            }
            if word == "-h" || word == "--help" {
                parsed.wantsHelp = true
                continue
            }
            guard word.hasPrefix("--") else { throw unknownOption(word) }
            var name = String(word.dropFirst(2))
            var inlineValue: String?
            if let equals = name.firstIndex(of: "=") {
                inlineValue = String(name[name.index(after: equals)...])
                name = String(name[..<equals])
            }
            guard let option = options.first(where: { $0.name == name }) else { throw unknownOption("--" + name) }
            if option.isFlag {
                guard inlineValue == nil else { throw UsageError("--\(name) takes no value") }
                parsed.flags.insert(name)
            } else if let inlineValue {
                try refuseIfMalformed(index - 1, as: "the value of --\(name)")
                parsed.values[name] = inlineValue
            } else {
                guard index < arguments.count else {
                    throw UsageError("--\(name) needs a value <\(option.valueName!)>")
                }
                try refuseIfMalformed(index, as: "the value of --\(name)")
                parsed.values[name] = arguments[index]
                index += 1
            }
        }
        if parsed.wantsHelp { return parsed }
        // Leading arguments that may be left out are, when their option is given.
        let optional = self.arguments.prefix { argument in
            argument.optionalWith.map { parsed.values[$0] != nil || parsed.flags.contains($0) } ?? false
        }.count
        if positionals.count < self.arguments.count - optional {
            let missing = self.arguments[(optional + positionals.count)...].map { "<\($0.name)>" }
            throw UsageError("missing " + missing.joined(separator: " and "))
        }
        if trailing == nil, positionals.count > self.arguments.count {
            throw UsageError("unexpected argument '\(positionals[self.arguments.count])'")
        }
        // The arguments given keep their places from the end of those described.
        let skipped = max(0, self.arguments.count - positionals.count)
        for (number, position) in positionalWords.enumerated() {
            let described = skipped + number
            let name = described < self.arguments.count ? self.arguments[described].name : trailing ?? "argument"
            try refuseIfMalformed(position, as: "<\(name)>")
            if described < self.arguments.count {
                parsed.arguments[name] = arguments[position]
            } else {
                parsed.trailing.append(arguments[position])
            }
        }
        return parsed
    }

    /// An option the command does not have, with the closest one it has; else, for a command that
    /// takes arguments, how to give one that starts with "-".
    private func unknownOption(_ word: String) -> UsageError {
        let names = options.map { "--" + $0.name } + ["--help"]
        if let closest = NameSuggestion.closest(to: word, among: names) {
            return UsageError("unknown option '\(word)'; did you mean '\(closest)'?")
        }
        guard trailing != nil || !arguments.isEmpty else { return UsageError("unknown option '\(word)'") }
        return UsageError(
            "unknown option '\(word)'; an argument that starts with '-' goes after '--', which ends the options "
                + "(-- \(word))")
    }

    /// Whether `word` is a negative number (`-5`, `-0.25`, `-.5`, `-1e3`): a minus, then a digit
    /// or a point and a digit, and a number as a whole.
    static func isNegativeNumber(_ word: String) -> Bool {
        let characters = Array(word.prefix(3))
        guard characters.count >= 2, characters[0] == "-", Double(word) != nil else { return false }
        return characters[1].isASCII && characters[1].isNumber
            || (characters[1] == "." && characters.count == 3 && characters[2].isASCII && characters[2].isNumber)
    }
}
