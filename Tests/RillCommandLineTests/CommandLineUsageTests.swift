import Foundation
import RillTestSupport
import Testing

@testable import Rill
@testable import RillCommandLine

/// The `rill` tool met for the first time: help, versions, mistyped names, missing arguments,
/// entities that do not exist yet, ids on standard input, and arguments that are not UTF-8.
@Suite struct CommandLineUsageTests {
    let directory = TemporaryDirectory()

    func rill(_ arguments: [String], input: String? = nil) throws -> ProcessRun {
        try runBuilt("rill", arguments, input: input)
    }

    /// Runs `script` with `/bin/sh -c`, `$0` being the built `rill`: the shell passes bytes
    /// that a `Process`'s `String` arguments cannot hold (`printf '\377'`).
    func shell(_ script: String, _ arguments: [String]) throws -> (status: Int32, error: String) {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/bin/sh")
        process.arguments = ["-c", script, buildProductsDirectory.appendingPathComponent("rill").path] + arguments
        let output = Pipe()
        let error = Pipe()
        process.standardOutput = output
        process.standardError = error
        process.standardInput = FileHandle.nullDevice
        try process.run()
        _ = output.fileHandleForReading.readDataToEndOfFile()
        let errData = error.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        return (process.terminationStatus, String(decoding: errData, as: UTF8.self))
    }

    /// A store of Authors `a1`…`a6` and Counters 1…9, written by a Swift model, in one commit.
    func makeStore(_ name: String = "store") throws -> (path: String, container: ModelContainer) {
        let path = directory.path(name)
        let container = try ModelContainer(
            for: Author.self, Counter.self, configurations: ModelConfiguration(url: URL(fileURLWithPath: path)))
        for number in 1...6 { container.mainContext.insert(Author(id: "a\(number)", name: "Author \(number)")) }
        for number in 1...9 { container.mainContext.insert(Counter(id: number, value: number)) }
        try container.mainContext.save()
        return (path, container)
    }

    func identifiers(_ path: String, _ entity: String) throws -> [String] {
        try rill(["query", path, entity, "--json"]).output.split(separator: "\n").map { line in
            let record = try JSONSerialization.jsonObject(with: Data(line.utf8)) as! [String: Any]
            return "\(record["id"]!)"
        }.sorted()
    }

    // MARK: - Help, version, mistyped names

    @Test func versionIsPrintedByBothSpellings() throws {
        for arguments in [["--version"], ["version"]] {
            let run = try rill(arguments)
            #expect(run.status == 0, "\(arguments): \(run.error)")
            #expect(run.output == "rill \(RillVersion.current)\n", "\(arguments)")
        }
        #expect(try rill(["version", "extra"]).status == 64)
    }

    @Test func helpOfACommandIsItsHelpOption() throws {
        let overview = try rill(["--help"])
        #expect(overview.status == 0)
        #expect(overview.output.contains("help ") && overview.output.contains("version "))
        #expect(try rill(["help"]).output == overview.output)
        for command in Commands.all.map(\.description.name) {
            let help = try rill(["help", command])
            #expect(help.status == 0, "help \(command): \(help.error)")
            #expect(help.output == (try rill([command, "--help"])).output, "help \(command)")
            #expect(help.output.contains("USAGE: rill \(command)"))
        }
        let unknown = try rill(["help", "qeury"])
        #expect(unknown.status == 64)
        #expect(unknown.error.contains("unknown command 'qeury'; did you mean 'query'?"), "\(unknown.error)")
        #expect(try rill(["help", "query", "log"]).status == 64)
    }

    /// Every command and option spelt with two neighbouring letters swapped is answered with
    /// its right name; a word close to nothing gets no suggestion.
    @Test func mistypedCommandsAndOptionsSuggestTheRightName() throws {
        func swaps(_ name: String) -> [String] {
            let letters = Array(name)
            return (0..<max(0, letters.count - 1)).compactMap { index in
                guard letters[index] != letters[index + 1] else { return nil }
                var swapped = letters
                swapped.swapAt(index, index + 1)
                return String(swapped)
            }
        }
        for command in Commands.all.map(\.description.name) + ["help", "version"] where command.count >= 4 {
            for typo in swaps(command) {
                let run = try rill([typo])
                #expect(run.status == 64, "\(typo)")
                #expect(run.error.contains("unknown command '\(typo)'; did you mean '\(command)'?"), "\(run.error)")
            }
        }
        #expect(try rill(["--verison"]).error.contains("did you mean '--version'?"))
        for command in Commands.all {
            // The arguments are never reached: an unknown option is refused first.
            let positionals = Array(repeating: "x", count: command.description.arguments.count)
            for option in command.description.options.map(\.name) {
                for typo in swaps("--" + option) where typo.hasPrefix("--") {
                    let run = try rill([command.description.name, typo] + positionals)
                    #expect(run.status == 64, "\(command.description.name) \(typo)")
                    #expect(
                        run.error.contains("unknown option '\(typo)'; did you mean '--\(option)'?"),
                        "\(command.description.name) \(typo): \(run.error)")
                }
            }
        }
        let far = try rill(["frobnicate"])
        #expect(far.status == 64)
        #expect(far.error.contains("unknown command 'frobnicate'") && !far.error.contains("did you mean"))
    }

    // MARK: - Missing arguments, --since

    @Test func watchWithoutAQuerySaysSo() throws {
        let (path, _) = try makeStore()
        let run = try rill(["watch", path])
        #expect(run.status == 64, "\(run.error)")
        #expect(run.error.contains("missing <query>") && run.error.contains("USAGE: rill watch"), "\(run.error)")
        #expect(!run.error.contains("bad query"))
        #expect(run.output.isEmpty)
        let nothing = try rill(["watch"])
        #expect(nothing.status == 64)
        #expect(nothing.error.contains("missing <store> and <query>"), "\(nothing.error)")
        let connected = try rill(["watch", "--connect", path])
        #expect(connected.status == 64)
        #expect(connected.error.contains("missing <query>"), "\(connected.error)")
        #expect(try rill(["get", path]).error.contains("missing <entity> and <id>"))
    }

    @Test func logAndWatchRefuseTheSameCommitsPastTheHead() throws {
        let (path, container) = try makeStore()
        let head = try container.store.head()
        for since in [head + 1, head + 1_000] {
            for arguments in [
                ["log", path, "--since", "\(since)"], ["log", path, "--follow", "--since", "\(since)"],
                ["watch", path, "Counter", "--json", "--since", "\(since)"],
            ] {
                guard let run = try BadQueryCommandTests.rillWithin30Seconds(arguments) else {
                    Issue.record("\(arguments): still running after 30 s")
                    continue
                }
                #expect(run.status == 1, "\(arguments): \(run.error)")
                #expect(run.error.contains("after commit \(since): the log's last commit is \(head)"), "\(run.error)")
                #expect(run.output.isEmpty)
            }
        }
        let atHead = try rill(["log", path, "--since", "\(head)"])
        #expect(atHead.status == 0 && atHead.output.isEmpty, "\(atHead.error)")
    }

    // MARK: - Entities that do not exist yet

    @Test func aMissingEntitySaysHowToCreateIt() throws {
        let (path, _) = try makeStore()
        let advice =
            #"create it by saving a model of it from Swift, or declare it with `echo '{"entity":"Note","identifier":"String"}' | rill import <store>`"#
        for arguments in [
            ["query", path, "Note"], ["get", path, "Note", "n1"], ["watch", path, "Note"],
            ["watch", "--json", path, "Note where text == \"x\""], ["insert", path, "Note", #"{"id":"n1"}"#],
            ["update", path, "Note", #"{"id":"n1"}"#], ["delete", path, "Note", "n1"], ["export", path, "Note"],
            ["log", path, "--entity", "Counter,Note"],
        ] {
            guard let run = try BadQueryCommandTests.rillWithin30Seconds(arguments) else {
                Issue.record("\(arguments): still running after 30 s")
                continue
            }
            #expect(run.status == 1, "\(arguments): \(run.error)")
            #expect(run.error.contains("no entity Note (it has: Author, Counter); " + advice), "\(run.error)")
        }

        let daemon = try DaemonProcess(store: path, log: directory.path("serve.log"))
        for (method, target, body) in [
            ("GET", "/v1/query?q=Note", nil), ("GET", "/v1/subscribe?q=Note", nil),
            ("GET", "/v1/query?as_of=1&q=Note", nil), ("GET", "/v1/history?entity=Note", nil),
            ("POST", "/v1/save", #"[{"op":"insert","entity":"Note","record":{"id":"n1"}}]"#),
        ] {
            let response = try HTTPTestClient(unix: daemon.socket).request(method, target, body: body)
            #expect(response?.status == 404, "\(target)")
            let error = response?.json["error"] as? [String: Any]
            #expect(error?["code"] as? String == "unknownEntity", "\(target)")
            #expect((error?["message"] as? String)?.contains(advice) == true, "\(target): \(response?.body ?? "")")
        }
        #expect(daemon.stop() == 0)

        // The advice works as given.
        let declared = try rill(["import", path], input: #"{"entity":"Note","identifier":"String"}"# + "\n")
        #expect(declared.status == 0, "\(declared.error)")
        let inserted = try rill(["insert", path, "Note", #"{"id":"n1","text":"first"}"#])
        #expect(inserted.status == 0, "\(inserted.error)")
        #expect(try rill(["get", path, "Note", "n1"]).output == #"{"id":"n1","text":"first"}"# + "\n")
    }

    /// A negative id is given as it is: `rill get store Counter -5`, not only after `--`.
    @Test func aNegativeIdIsAnArgument() throws {
        let (path, container) = try makeStore()
        container.mainContext.insert(Counter(id: -5, value: 50))
        try container.mainContext.save()
        let got = try rill(["get", path, "Counter", "-5"])
        #expect(got.status == 0, "\(got.error)")
        #expect(got.output == #"{"id":-5,"value":50,"payload":""}"# + "\n")
        let deleted = try rill(["delete", path, "Counter", "-5", "9"])
        #expect(deleted.status == 0, "\(deleted.error)")
        #expect(try identifiers(path, "Counter") == (1...8).map(String.init))
        // A word that is no number and no option says how to give it.
        let dashed = try rill(["get", path, "Author", "-a1"])
        #expect(dashed.status == 64)
        #expect(dashed.error.contains("unknown option '-a1'; an argument that starts with '-' goes after '--'"))
        #expect(try rill(["get", path, "Author", "--", "-a1"]).error.contains("no Author with id -a1"))
    }

    // MARK: - Ids on standard input

    /// Every form of id an argument takes is taken on a line of standard input, with the same
    /// result as when given as arguments.
    @Test func deleteTakesIdsOnStandardInputAsArguments() throws {
        let (fromInput, _) = try makeStore("input")
        let (fromArguments, _) = try makeStore("arguments")
        let forms = ["a1", #""a2""#, #"{"id":"a3"}"#, #"{"op":"delete","entity":"Author","id":"a4"}"#]
        let piped = try rill(["delete", fromInput, "Author"], input: forms.joined(separator: "\n") + "\n\n  \r\n")
        #expect(piped.status == 0, "\(piped.error)")
        let given = try rill(["delete", fromArguments, "Author"] + forms)
        #expect(given.status == 0, "\(given.error)")
        #expect(try identifiers(fromInput, "Author") == ["a5", "a6"])
        #expect(try identifiers(fromArguments, "Author") == ["a5", "a6"])
        #expect(piped.output == given.output)

        let numbers = try rill(["delete", fromInput, "Counter"], input: "7\r\n  8 \n{\"id\":9}\n")
        #expect(numbers.status == 0, "\(numbers.error)")
        #expect(try identifiers(fromInput, "Counter") == (1...6).map(String.init))

        // A bad line is named, and nothing is deleted.
        let bad = try rill(["delete", fromInput, "Author"], input: "a5\n{\"id\":\n")
        #expect(bad.status == 1)
        #expect(bad.error.contains("line 2"), "\(bad.error)")
        #expect(try identifiers(fromInput, "Author") == ["a5", "a6"])
        let empty = try rill(["delete", fromInput, "Author"], input: "\n")
        #expect(empty.status == 64)
        #expect(empty.error.contains("nothing to delete"))
    }

    // MARK: - Arguments that are not UTF-8

    /// Bytes that are not UTF-8 are refused in an argument, as they are on standard input,
    /// naming the argument; nothing is written.
    @Test func argumentsThatAreNotUTF8AreRefused() throws {
        let (path, container) = try makeStore()
        let head = try container.store.head()
        for (script, named) in [
            (#"exec "$0" insert "$1" Author "$(printf '{"id":"x","name":"\377"}')""#, "<record>"),
            (#"exec "$0" update "$1" Author "$(printf '{"id":"a1","name":"\377"}')""#, "<fields>"),
        ] {
            let run = try shell(script, [path])
            #expect(run.status == 64, "\(named): \(run.error)")
            #expect(run.error.contains("\(named) is not valid UTF-8"), "\(run.error)")
            #expect(run.error.contains("\u{FFFD}"), "the bad byte is shown: \(run.error)")
        }
        for (script, named) in [
            (#"exec "$0" delete "$1" Author "$(printf 'a1\377')""#, "<id>"),
            (#"exec "$0" get "$1" Author "$(printf 'a1\377')""#, "<id>"),
            (#"exec "$0" query "$1" "$(printf 'Author where name == "\377"')""#, "<query>"),
            (#"exec "$0" insert "$1" "$(printf 'Author\377')" '{"id":"y","name":"n"}'"#, "<entity>"),
            (
                #"exec "$0" insert --author "$(printf '\377')" "$1" Author '{"id":"y","name":"n"}'"#,
                "the value of --author"
            ),
            (
                #"exec "$0" insert --author="$(printf '\377')" "$1" Author '{"id":"y","name":"n"}'"#,
                "the value of --author"
            ),
            (#"exec "$0" stats "$(printf '%s\377' "$1")""#, "<store>"),
        ] {
            let run = try shell(script, [path])
            #expect(run.status == 64, "\(script): \(run.error)")
            #expect(run.error.contains("\(named) is not valid UTF-8"), "\(script): \(run.error)")
        }
        // The same bytes on standard input are refused too.
        let piped = try shell(
            #"printf '{"id":"x","name":"\377"}\n' | "$0" insert "$1" Author"#, [path])
        #expect(piped.status == 1)
        #expect(piped.error.contains("not valid UTF-8"), "\(piped.error)")
        #expect(try container.store.head() == head)
        #expect(try identifiers(path, "Author") == (1...6).map { "a\($0)" })

        // Text that is UTF-8 is taken as it is.
        let accented = try rill(["insert", path, "Author", #"{"id":"łódź","name":"Stanisław Lem"}"#])
        #expect(accented.status == 0, "\(accented.error)")
        #expect(try rill(["get", path, "Author", "łódź"]).output.contains("Stanisław Lem"))
    }
}
