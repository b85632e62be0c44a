import Foundation
import RillTestSupport
import Testing

@testable import RillCommandLine

/// Each command's help, detailed enough to stand for a manual page: a description, every
/// argument and option with its meaning, and examples that are real command lines.
@Suite struct CommandHelpTests {
    func rill(_ arguments: [String]) throws -> ProcessRun { try runBuilt("rill", arguments) }

    /// The words a shell would make of `line`, up to a redirection or a pipe: words split at
    /// blanks, single and double quotes kept together (no escapes inside single quotes).
    static func words(_ line: String) -> [String] {
        var words: [String] = []
        var word = ""
        var inWord = false
        var quote: Character?
        for character in line {
            if let open = quote {
                if character == open { quote = nil } else { word.append(character) }
                continue
            }
            switch character {
            case "'", "\"":
                quote = character
                inWord = true
            case " ":
                if inWord { words.append(word) }
                word = ""
                inWord = false
            case "|", ">", "<":
                if inWord { words.append(word) }
                return words
            default:
                word.append(character)
                inWord = true
            }
        }
        if inWord { words.append(word) }
        return words
    }

    /// Decodes `words` (after the command's name) into the command's options.
    func decode<C: Command>(_ command: C, _ words: [String]) throws {
        _ = try C.Options(command.description.parse(words))
    }

    @Test func everyArgumentAndOptionHasHelpText() {
        for command in Commands.all {
            let description = command.description
            #expect(!description.abstract.isEmpty, "\(description.name): no abstract")
            for argument in description.arguments {
                #expect(argument.help.count > 10, "\(description.name) <\(argument.name)>: '\(argument.help)'")
                #expect(description.help.contains(argument.help), "\(description.name) <\(argument.name)>")
            }
            for option in description.options {
                #expect(option.help.count > 10, "\(description.name) --\(option.name): '\(option.help)'")
                #expect(description.help.contains(option.help), "\(description.name) --\(option.name)")
                if let valueName = option.valueName {
                    #expect(
                        description.help.contains("--\(option.name) <\(valueName)>"),
                        "\(description.name) --\(option.name)")
                }
            }
        }
    }

    /// Every command has examples, in its help, and each one is a command line that its
    /// description parses and its options decode.
    @Test func everyCommandHasExamplesThatParse() throws {
        for command in Commands.all {
            let description = command.description
            #expect(!description.examples.isEmpty, "\(description.name): no examples")
            #expect(description.help.contains("EXAMPLES:"), "\(description.name)")
            for example in description.examples {
                #expect(description.help.contains(example), "\(description.name): \(example)")
                let words = Self.words(example)
                try #require(words.count >= 2 && words[0] == "rill", "\(example)")
                #expect(words[1] == description.name, "\(example)")
                #expect(throws: Never.self, "\(example)") { try decode(command, Array(words.dropFirst(2))) }
            }
        }
    }

    /// `rill help <command>` prints the same help as the built `rill <command> --help`, examples
    /// and all.
    @Test func theBuiltToolPrintsEachHelp() throws {
        for description in Commands.all.map(\.description) {
            let help = try rill(["help", description.name])
            #expect(help.status == 0)
            #expect(help.output == description.help + "\n", "\(description.name)")
        }
        let overview = try rill(["help"])
        for name in Commands.all.map(\.description.name) {
            #expect(overview.output.contains("  \(name) "), "overview: \(name)")
        }
    }
}
