import Foundation
import RillTestSupport
import Testing

@testable import RillCommandLine

/// `rill completions`: scripts generated from the command descriptions, checked against every
/// description, by each shell's own syntax check, and (bash, fish) by completing real words.
@Suite struct CompletionsCommandTests {
    let directory = TemporaryDirectory()

    static let descriptions = Commands.all.map(\.description)

    func rill(_ arguments: [String]) throws -> ProcessRun { try runBuilt("rill", arguments) }

    /// The path of an installed shell, or nil after saying why its checks are skipped.
    static func installed(_ shell: String) -> String? {
        for directory in ["/usr/bin", "/bin", "/usr/local/bin"] {
            let path = directory + "/" + shell
            if FileManager.default.isExecutableFile(atPath: path) { return path }
        }
        print("\(shell) is not installed: its checks are skipped (apt-get install -y \(shell))")
        return nil
    }

    /// Runs `executable` with `arguments` to its end.
    static func run(_ executable: String, _ arguments: [String]) throws -> ProcessRun {
        try runProgram(URL(fileURLWithPath: executable), arguments)
    }

    /// How `shell`'s script names an option.
    static func spelling(of option: String, in shell: CompletionShell) -> String {
        switch shell {
        case .bash: "--\(option)"
        case .zsh: "'--\(option)"
        case .fish: "-l \(option) "
        }
    }

    /// Every command and every option of every description is in every script, and `rill
    /// completions` prints the same scripts.
    @Test(arguments: CompletionShell.allCases)
    func everyCommandAndOptionIsInTheScript(_ shell: CompletionShell) throws {
        let script = shell.script(for: Self.descriptions)
        for description in Self.descriptions {
            #expect(script.contains(" \(description.name)"), "\(shell): \(description.name)")
            #expect(script.contains("\(description.name))") || shell == .fish, "\(shell): case \(description.name)")
            for option in description.options + [CompletionWords.helpOption] {
                #expect(
                    script.contains(Self.spelling(of: option.name, in: shell)),
                    "\(shell): \(description.name) --\(option.name)")
            }
        }
        let printed = try rill(["completions", shell.rawValue])
        #expect(printed.status == 0 && printed.error.isEmpty, "\(printed.error)")
        #expect(printed.output == script)
    }

    /// An option or argument added to a description is completed, with its hint: the scripts are
    /// generated, not written per command.
    @Test(arguments: CompletionShell.allCases)
    func anOptionAddedToADescriptionIsCompleted(_ shell: CompletionShell) {
        var descriptions = Self.descriptions
        descriptions[0].options.append(
            .init(name: "zz-added", valueName: "path", help: "An added option.", completion: .file))
        descriptions[0].options.append(.init(name: "zz-flag", help: "An added flag."))
        descriptions.append(
            CommandDescription(
                name: "zz-command", abstract: "An added command.",
                arguments: [.init(name: "colour", help: "A colour.", completion: .choices(["mauve", "teal"]))]))
        let script = shell.script(for: descriptions)
        #expect(!shell.script(for: Self.descriptions).contains("zz-"))
        for word in [
            "zz-command", "mauve teal", Self.spelling(of: "zz-added", in: shell),
            Self.spelling(of: "zz-flag", in: shell),
        ] {
            #expect(script.contains(word), "\(shell): \(word)")
        }
    }

    /// Each shell installed accepts its script's syntax.
    @Test(arguments: CompletionShell.allCases)
    func theShellAcceptsTheScript(_ shell: CompletionShell) throws {
        guard let executable = Self.installed(shell.rawValue) else { return }
        let path = directory.path("rill.\(shell.rawValue)")
        try shell.script(for: Self.descriptions).write(toFile: path, atomically: true, encoding: .utf8)
        let check = try Self.run(executable, shell == .fish ? ["--no-execute", path] : ["-n", path])
        #expect(check.status == 0, "\(shell): \(check.error)")
    }

    /// What bash offers after `words` (the last one being completed), with the script loaded.
    func bashCompletions(_ words: [String]) throws -> [String] {
        let path = directory.path("rill.bash")
        try CompletionShell.bash.script(for: Self.descriptions).write(toFile: path, atomically: true, encoding: .utf8)
        let quoted = words.map(BashCompletionScript.quoted).joined(separator: " ")
        let run = try Self.run(
            "/bin/bash",
            [
                "-c",
                "source \(BashCompletionScript.quoted(path)); COMP_WORDS=(\(quoted)); COMP_CWORD=\(words.count - 1); "
                    + "cd \(BashCompletionScript.quoted(directory.path(""))); _rill; printf '%s\\n' \"${COMPREPLY[@]}\"",
            ])
        #expect(run.status == 0, "\(words): \(run.error)")
        return run.output.split(separator: "\n").map(String.init)
    }

    @Test func bashCompletesCommandsOptionsAndValues() throws {
        try FileManager.default.createDirectory(atPath: directory.path("books"), withIntermediateDirectories: true)
        try "".write(toFile: directory.path("books.ndjson"), atomically: true, encoding: .utf8)
        #expect(try bashCompletions(["rill", "qu"]) == ["query"])
        #expect(Set(try bashCompletions(["rill", "comp"])) == ["completions", "compact"])
        #expect(try bashCompletions(["rill", "query", "--c"]) == ["--csv"])
        #expect(try bashCompletions(["rill", "completions", ""]) == ["bash", "zsh", "fish"])
        #expect(try bashCompletions(["rill", "serve", "store", "--log-level", "w"]) == ["warning"])
        #expect(try bashCompletions(["rill", "query", "boo"]) == ["books"])
        // The query after the store is not a path; a value of an option is not an argument.
        #expect(try bashCompletions(["rill", "query", "books", "boo"]) == [])
        #expect(try bashCompletions(["rill", "query", "--as-of", "3", "boo"]) == ["books"])
        #expect(Set(try bashCompletions(["rill", "import", "books", "--file", "boo"])) == ["books", "books.ndjson"])
        #expect(try bashCompletions(["rill", "help", "wat"]) == ["watch"])
        // A path with a blank is one word.
        try FileManager.default.createDirectory(atPath: directory.path("my store"), withIntermediateDirectories: true)
        #expect(try bashCompletions(["rill", "stats", "my"]) == ["my store"])
    }

    @Test func fishCompletesCommandsAndOptions() throws {
        guard let fish = Self.installed("fish") else { return }
        let path = directory.path("rill.fish")
        try CompletionShell.fish.script(for: Self.descriptions).write(toFile: path, atomically: true, encoding: .utf8)
        func complete(_ line: String) throws -> [String] {
            let run = try Self.run(fish, ["--no-config", "-c", "source \(path); complete -C '\(line)'"])
            #expect(run.status == 0, "\(line): \(run.error)")
            return run.output.split(separator: "\n").map { String($0.split(separator: "\t").first ?? "") }
        }
        #expect(try complete("rill qu") == ["query"])
        #expect(try complete("rill query --cs") == ["--csv"])
        #expect(Set(try complete("rill completions ")) == ["bash", "zsh", "fish"])
    }

    /// A shell `rill completions` does not know is a usage error naming the ones it does.
    @Test func anUnknownShellIsAUsageError() throws {
        let tcsh = try rill(["completions", "tcsh"])
        #expect(tcsh.status == 64 && tcsh.output.isEmpty)
        #expect(tcsh.error.contains("bash, zsh or fish") && tcsh.error.contains("'tcsh'"), "\(tcsh.error)")
        let none = try rill(["completions"])
        #expect(none.status == 64 && none.error.contains("missing <shell>"), "\(none.error)")
        #expect(try rill(["completions", "bash", "zsh"]).status == 64)
    }
}
