import Foundation
import RillHTTP
import RillServer
import RillTestSupport
import Testing

@testable import Rill
@testable import RillCommandLine

/// Each command's typed options, decoded from word lists without running `rill`: the values,
/// the defaults, and the usage errors of bad values, in the order the command checks them.
@Suite struct CommandOptionsTests {
    let directory = TemporaryDirectory()

    /// The options `command` decodes from `words` (the words after its name).
    func decode<C: Command>(_ command: C, _ words: [String]) throws -> C.Options {
        try C.Options(command.description.parse(words))
    }

    /// The message of the usage error that decoding `words` throws, or nil when none is thrown.
    func usageError<C: Command>(_ command: C, _ words: [String]) -> String? {
        do {
            _ = try decode(command, words)
            return nil
        } catch let error as UsageError {
            return error.message
        } catch {
            return "not a usage error: \(error)"
        }
    }

    func declaredNames<C: Command>(_ command: C) -> (arguments: [String], options: [String]) {
        (C.Options.arguments.map(\.name), C.Options.options.map(\.name))
    }

    // MARK: - Declarations

    /// The help lists what the options decode, no more and no less.
    @Test func everyDescriptionListsItsOptionsDeclarations() {
        for command in Commands.all {
            let declared = declaredNames(command)
            #expect(command.description.arguments.map(\.name) == declared.arguments, "\(command.description.name)")
            #expect(command.description.options.map(\.name) == declared.options, "\(command.description.name)")
        }
    }

    // MARK: - Values and defaults

    @Test func storeCommandsDecodeTheirArgumentsAndFlags() throws {
        let check = try decode(CheckCommand(), ["store", "--json"])
        #expect(check.store == "store" && check.json)
        #expect(try !decode(CheckCommand(), ["store"]).json)
        let stats = try decode(StatsCommand(), ["--json", "store"])
        #expect(stats.store == "store" && stats.json)
        let get = try decode(GetCommand(), ["store", "Book", "b1", "--pretty"])
        #expect(get.store == "store" && get.entity == "Book" && get.id == "b1" && get.pretty)
        // After `--`, words that look like options are arguments.
        let dashed = try decode(GetCommand(), ["store", "Book", "--", "--b1"])
        #expect(dashed.id == "--b1" && !dashed.pretty)
    }

    /// A negative number is an argument where the command takes one; any other word that starts
    /// with "-" and names no option is refused, saying how to give it as an argument.
    @Test func negativeNumbersAreArgumentsWhereOneMayGo() throws {
        for number in ["-5", "-0", "-0.25", "-.5", "-1e3", "-9223372036854775808"] {
            #expect(CommandDescription.isNegativeNumber(number), "\(number)")
            #expect(try decode(GetCommand(), ["store", "Book", number]).id == number)
            #expect(try decode(GetCommand(), ["store", "Book", number, "--pretty"]).pretty)
        }
        for word in ["-", "-x", "-5x", "--5", "-inf", "-nan", "-.", "-e5", "5"] {
            #expect(!CommandDescription.isNegativeNumber(word), "\(word)")
        }
        let delete = try decode(WriteCommand(operation: .delete), ["store", "Counter", "-1", "2", "-3"])
        #expect(delete.items == ["-1", "2", "-3"])
        // No place left for it: still an unknown option, with the way to give it.
        #expect(usageError(GetCommand(), ["store", "Book", "b1", "-5"])?.contains("-- -5") == true)
        let dashed = usageError(GetCommand(), ["store", "Book", "-b1"])
        #expect(
            dashed
                == "unknown option '-b1'; an argument that starts with '-' goes after '--', which ends the options (-- -b1)"
        )
        #expect(try decode(GetCommand(), ["store", "Book", "--", "-b1"]).id == "-b1")
    }

    @Test func queryDecodesItsQueryBeforeTheStoreIsOpened() throws {
        let options = try decode(QueryCommand(), ["missing-store", "Book where pages > 300", "--explain"])
        #expect(options.store == "missing-store")
        #expect(options.query.text == "Book where pages > 300")
        #expect(options.query.query.entity == "Book")
        #expect(options.explain && !options.json)
        #expect(throws: BadQueryArgument.self) { try decode(QueryCommand(), ["store", "Book where"]) }
        do {
            _ = try decode(QueryCommand(), ["store", "Book where"])
        } catch let error as BadQueryArgument {
            #expect(error.description.hasPrefix("bad query\n"), "\(error)")
        }
    }

    @Test func writesDecodeTheirItemsAndAuthor() throws {
        for operation in [JSONChange.Operation.insert, .update, .delete] {
            let command = WriteCommand(operation: operation)
            let options = try decode(command, ["store", "Book", #"{"id":"b1"}"#, "b2", "--author=me"])
            #expect(options.store == "store" && options.entity == "Book")
            #expect(options.items == [#"{"id":"b1"}"#, "b2"])
            #expect(options.author == "me")
            let piped = try decode(command, ["store", "Book"])
            #expect(piped.items.isEmpty && piped.author == nil)
        }
    }

    @Test func importAndExportDecodeTheirFilesAndEntities() throws {
        let imported = try decode(ImportCommand(), ["store", "--file", "changes.ndjson", "--author", "loader"])
        #expect(imported.store == "store" && imported.file == "changes.ndjson" && imported.author == "loader")
        let piped = try decode(ImportCommand(), ["store"])
        #expect(piped.file == nil && piped.author == nil)
        #expect(try decode(ExportCommand(), ["store", "Book", "Author"]).entities == ["Book", "Author"])
        #expect(try decode(ExportCommand(), ["store"]).entities.isEmpty)
    }

    @Test func logDecodesItsWindowWithDefaults() throws {
        let defaults = try decode(LogCommand(), ["store"])
        #expect(defaults.since == nil && defaults.until == nil && defaults.limit == Int.max && !defaults.follow)
        #expect(defaults.entities == nil && defaults.authors == nil && !defaults.beforeAfter && !defaults.reverse)
        let given = try decode(LogCommand(), ["store", "--since", "7", "--limit=3", "--follow"])
        #expect(given.store == "store" && given.since == .sequence(7) && given.limit == 3 && given.follow)
        let filtered = try decode(
            LogCommand(),
            [
                "store", "--since", "2026-03-01", "--until", "12", "--entity", "Book, Author", "--author=alice",
                "--before-after", "--reverse",
            ])
        #expect(filtered.since == .date(Date(timeIntervalSince1970: 1_772_323_200)))
        #expect(filtered.until == .sequence(12) && filtered.entities == ["Book", "Author"])
        #expect(filtered.authors == ["alice"] && filtered.beforeAfter && filtered.reverse)
        for (arguments, message) in [
            (["store", "--until", "yesterday"], "--until takes a commit's sequence number or an ISO-8601 date"),
            (["store", "--entity", "Book,,Author"], "--entity takes names separated by commas, none empty"),
            (
                ["store", "--follow", "--until", "3"],
                "--follow prints commits as they land, oldest first: it does not take --until"
            ),
            (["store", "--follow", "--reverse"], "it does not take --reverse"),
        ] {
            let error = #expect(throws: UsageError.self) { try decode(LogCommand(), arguments) }
            #expect(error?.message.contains(message) == true, "\(arguments): \(String(describing: error))")
        }
    }

    @Test func watchDecodesAStoreOrADaemon() throws {
        let local = try decode(WatchCommand(), ["store", "Book where isRead == false", "--json", "--since", "4"])
        guard case .store(let path) = local.source else {
            Issue.record("not a store: \(local.source)")
            return
        }
        #expect(path == "store" && local.json && local.since == 4 && !local.retry)
        #expect(local.query.text == "Book where isRead == false")

        // With --connect the store is left out: the one argument is the query.
        let remote = try decode(
            WatchCommand(), ["--connect", "http://127.0.0.1:8080", "Book", "--retry", "--token-file", "token"])
        guard case .daemon(let address) = remote.source else {
            Issue.record("not a daemon: \(remote.source)")
            return
        }
        #expect(address.description == "http://127.0.0.1:8080")
        #expect(remote.query.text == "Book" && remote.retry && remote.tokenFile == "token" && remote.since == nil)
    }

    @Test func watchDecodesAReplaysRange() throws {
        #expect(try decode(WatchCommand(), ["store", "Book"]).replay == nil)
        #expect(
            try decode(WatchCommand(), ["store", "Book", "--from", "3", "--to=9"]).replay
                == .init(from: .sequence(3), to: .sequence(9)))
        #expect(
            try decode(WatchCommand(), ["store", "Book", "--from", "3"]).replay == .init(from: .sequence(3), to: nil))
        #expect(
            try decode(WatchCommand(), ["--to", "9", "store", "Book", "--json"]).replay
                == .init(from: .sequence(0), to: .sequence(9)))
        #expect(
            try decode(WatchCommand(), ["store", "Book", "--from", "4", "--to", "4"]).replay
                == .init(from: .sequence(4), to: .sequence(4)))
        #expect(
            try decode(WatchCommand(), ["store", "Book", "--to", "2026-01-01"]).replay
                == .init(from: .sequence(0), to: .date(Date(timeIntervalSince1970: 1_767_225_600))))
        let position = "a commit's sequence number or an ISO-8601 date such as 2026-03-01T12:00:00Z"
        expectRefusal(WatchCommand(), ["store", "Book", "--from", "x"], "--from takes \(position); got 'x'")
        expectRefusal(
            WatchCommand(), ["store", "Book", "--from", "2026-02-01", "--to", "2026-01-01"],
            "--from 2026-02-01 is after --to 2026-01-01: a replay runs forward, from the earlier commit")
        expectRefusal(
            WatchCommand(), ["store", "Book", "--from", "5", "--to", "4"],
            "--from 5 is after --to 4: a replay runs forward, from the earlier commit")
        expectRefusal(
            WatchCommand(), ["store", "Book", "--to", "4", "--since", "2"],
            "--since 2 resumes a live watch and --to 4 replays a range, then ends: give one or the other")
        expectRefusal(
            WatchCommand(), ["--connect", "http://127.0.0.1:8080", "Book", "--from", "1", "--to", "2"],
            "--from 1 --to 2 replays the store's own log: give the store directory, not --connect")
    }

    @Test func compactDecodesItsHorizon() throws {
        let given = try decode(CompactCommand(), ["store", "--before", "12", "--keep-file", "--json"])
        #expect(given.store == "store" && given.before == .sequence(12) && given.keepFile && given.json)
        let byDate = try decode(CompactCommand(), ["store", "--before=2026-03-01"])
        #expect(byDate.before == .date(Date(timeIntervalSince1970: 1_772_323_200)) && !byDate.keepFile)
        expectRefusal(
            CompactCommand(), ["store"], "rill compact needs --before <seq|date>: the first commit to keep, or a date")
    }

    @Test func serveDecodesTheServersConfiguration() throws {
        let defaults = try decode(ServeCommand(), ["store"])
        #expect(defaults.store == "store" && defaults.logLevel == nil)
        #expect(defaults.server.socketPath == "store/rill.sock")
        #expect(defaults.server.tcp == nil && defaults.server.token == nil)
        #expect(defaults.server.allowedOrigins.isEmpty)
        #expect(defaults.server.progressSeconds == 5)

        let tokenFile = directory.path("token")
        try Data("  secret\n".utf8).write(to: URL(fileURLWithPath: tokenFile))
        let given = try decode(
            ServeCommand(),
            [
                "store", "--socket", "/tmp/s.sock", "--listen", ":8080", "--token-file", tokenFile,
                "--allow-origin", "https://a.example, https://b.example", "--max-body", "1024", "--queue", "8",
                "--max-connections", "9", "--max-unauthenticated", "2", "--request-timeout", "0.5",
                "--idle-timeout", "30", "--keep-alive", "5", "--resume-limit", "0", "--log-level", "debug",
                "--progress", "0.5",
            ])
        #expect(given.logLevel == .debug)
        let server = given.server
        #expect(server.socketPath == "/tmp/s.sock")
        #expect(server.tcp?.description == "http://127.0.0.1:8080")
        #expect(server.token == "secret")
        #expect(server.allowedOrigins == ["https://a.example", "https://b.example"])
        #expect(server.limits.bodyBytes == 1024 && server.subscriberQueue == 8)
        #expect(server.maxConnections == 9 && server.maxUnauthenticated == 2)
        #expect(server.requestSeconds == 0.5 && server.idleSeconds == 30 && server.keepAliveSeconds == 5)
        #expect(server.resumeLimit == 0)
        #expect(server.progressSeconds == 0.5)
        #expect(try decode(ServeCommand(), ["store", "--progress", "0"]).server.progressSeconds == 0)
    }

    // MARK: - Bad values

    /// Expects decoding `words` to throw the usage error `message`.
    func expectRefusal<C: Command>(
        _ command: C, _ words: [String], _ message: String, sourceLocation: SourceLocation = #_sourceLocation
    ) {
        #expect(usageError(command, words) == message, "\(words)", sourceLocation: sourceLocation)
    }

    /// A bad value is refused with the message `rill` prints for it.
    @Test func badValuesGiveTheCommandsUsageErrors() {
        let anyNumber = "a whole number from 0 to \(Int.max)"
        expectRefusal(
            LogCommand(), ["store", "--since", "x"],
            "--since takes a commit's sequence number or an ISO-8601 date such as 2026-03-01T12:00:00Z; got 'x'")
        expectRefusal(LogCommand(), ["store", "--limit", "-3"], "--limit takes \(anyNumber); got '-3'")

        expectRefusal(WatchCommand(), ["store", "Book", "--since", "1.5"], "--since takes \(anyNumber); got '1.5'")
        expectRefusal(
            WatchCommand(), ["store", "Book", "--retry"],
            "--retry is for --connect: a watch of a store directory does not connect")
        expectRefusal(
            WatchCommand(), ["--connect", "sock", "store", "Book"], "give either a store or --connect, not both")
        expectRefusal(
            WatchCommand(), ["--connect", "http://host:port", "Book"],
            "--connect takes a socket path, a store directory or http://host:port; got 'http://host:port'")

        expectRefusal(
            WatchCommand(), ["store", "Book", "--progress", "1"],
            "--progress is for --json: the tables print only the changes")
        expectRefusal(
            WatchCommand(), ["--json", "store", "Book", "--progress", "-1"],
            "--progress takes a number of seconds 0 (never) or above, at most 86400; got '-1'")
        expectRefusal(
            WatchCommand(), ["--json", "store", "Book", "--from", "3", "--progress", "1"],
            "--progress is for a live watch: a replay of a range prints its changes, then ends")

        let serve = ServeCommand()
        expectRefusal(
            serve, ["store", "--log-level", "loud"], "--log-level takes debug, info, warning or error; got 'loud'")
        expectRefusal(
            serve, ["store", "--progress", "soon"],
            "--progress takes a number of seconds 0 (never) or above, at most 86400; got 'soon'")
        expectRefusal(
            serve, ["store", "--listen", "nowhere"], "--listen takes host:port, [v6]:port or :port; got 'nowhere'")
        for (option, range, bad) in [
            ("max-body", "1 to 1073741824", "0"), ("queue", "1 to 1000000", "1000001"),
            ("max-connections", "1 to 100000", "0"), ("max-unauthenticated", "1 to 100000", "x"),
            ("resume-limit", "0 to \(Int.max)", "-1"),
        ] {
            expectRefusal(
                serve, ["store", "--" + option, bad], "--\(option) takes a whole number from \(range); got '\(bad)'")
        }
        for (option, bad) in [("request-timeout", "0"), ("idle-timeout", "86401"), ("keep-alive", "soon")] {
            expectRefusal(
                serve, ["store", "--" + option, bad],
                "--\(option) takes a number of seconds above 0, at most 86400; got '\(bad)'")
        }
    }

    /// With several bad values, the one reported is the one `rill` always checked first.
    @Test func badValuesAreCheckedInTheCommandsOrder() {
        // The query comes first, then --since, then how the watch connects.
        #expect(throws: BadQueryArgument.self) { try decode(WatchCommand(), ["store", "Book where", "--since", "x"]) }
        let anyNumber = "a whole number from 0 to \(Int.max)"
        expectRefusal(
            WatchCommand(), ["store", "Book", "--since", "x", "--retry"], "--since takes \(anyNumber); got 'x'")
        expectRefusal(
            WatchCommand(), ["--retry", "--connect", "http://host:port", "store", "Book"],
            "give either a store or --connect, not both")
        // The log level first, then --listen and its token, then the numbers in their order.
        let serve = ServeCommand()
        expectRefusal(
            serve, ["store", "--max-body", "0", "--log-level", "loud"],
            "--log-level takes debug, info, warning or error; got 'loud'")
        expectRefusal(
            serve, ["store", "--max-body", "0", "--listen", "nowhere"],
            "--listen takes host:port, [v6]:port or :port; got 'nowhere'")
        expectRefusal(
            serve, ["store", "--max-connections", "0", "--resume-limit", "x"],
            "--resume-limit takes \(anyNumber); got 'x'")
        expectRefusal(
            serve, ["store", "--keep-alive", "0", "--request-timeout", "0"],
            "--request-timeout takes a number of seconds above 0, at most 86400; got '0'")
        // A token file that cannot be read is not a usage error, and is reported before the numbers.
        do {
            _ = try decode(
                ServeCommand(),
                ["store", "--listen", ":8080", "--token-file", directory.path("none"), "--max-body", "0"])
            Issue.record("decoded")
        } catch let error as RillError {
            #expect(error.message.contains("cannot read the token file"), "\(error)")
        } catch {
            Issue.record("\(error)")
        }
    }

    @Test func listeningOnTCPNeedsAToken() throws {
        let empty = directory.path("empty")
        try Data().write(to: URL(fileURLWithPath: empty))
        #expect(throws: RillError.self) {
            try decode(ServeCommand(), ["store", "--listen", ":8080", "--token-file", empty])
        }
        guard ProcessInfo.processInfo.environment["RILL_TOKEN"]?.isEmpty ?? true else { return }
        #expect(
            usageError(ServeCommand(), ["store", "--listen", ":8080"])
                == "--listen needs a bearer token: --token-file <path>, or RILL_TOKEN in the environment")
    }
}
