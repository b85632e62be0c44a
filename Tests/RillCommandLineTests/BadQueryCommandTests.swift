import Foundation
import RillLocks
import RillTestSupport
import RillWorkloads
import Testing

@testable import Rill

#if canImport(Glibc)
    import Glibc
#endif

/// Queries naming a field their entity does not have, or comparing a field with a constant of
/// the wrong kind, through the built `rill`: `rill query`, `rill watch` (local and through the
/// daemon) and the daemon's `/v1/query` and `/v1/subscribe` refuse them at once.
@Suite struct BadQueryCommandTests {
    let directory = TemporaryDirectory()

    /// The issue's examples: the query, the column of the field, and what the message says.
    static let mistakes: [(query: String, column: Int, message: String)] = [
        (#"Book where titel == "Emma""#, 12, #"Book has no field "titel" (did you mean title?"#),
        ("Book sort by priorty", 14, #"Book has no field "priorty""#),
        (#"Book where pages > "100""#, 12, #"Book.pages is a number, and "100" is a string"#),
        (#"Book where isRead == "false""#, 12, #"Book.isRead is a Bool, and "false" is a string"#),
    ]

    func makeStore() throws -> String {
        let path = directory.path("books")
        let container = try ModelContainer(
            for: Book.self, configurations: ModelConfiguration(url: URL(fileURLWithPath: path)))
        for (title, pages, read) in [("Dune", 412, true), ("Emma", 474, false), ("Ubik", 202, false)] {
            container.mainContext.insert(Book(title: title, author: "A", pages: pages, isRead: read))
        }
        try container.mainContext.save()
        return path
    }

    /// How a process ended, and what it printed.
    struct Finished {
        var status: Int32
        var output: String
        var error: String
    }

    /// Runs the built `rill`; nil when it is still running after 30 s (it is then killed).
    static func rillWithin30Seconds(_ arguments: [String]) throws -> Finished? {
        let process = Process()
        process.executableURL = buildProductsDirectory.appendingPathComponent("rill")
        process.arguments = arguments
        let output = Pipe()
        let error = Pipe()
        process.standardOutput = output
        process.standardError = error
        process.standardInput = FileHandle.nullDevice
        try process.run()
        // Read while it runs, so that a full pipe cannot stall it.
        let collected = Lock<(output: Data, error: Data)>((Data(), Data()))
        let done = DispatchGroup()
        for (pipe, isError) in [(output, false), (error, true)] {
            done.enter()
            Thread {
                let data = pipe.fileHandleForReading.readDataToEndOfFile()
                collected.withLock { if isError { $0.error = data } else { $0.output = data } }
                done.leave()
            }.start()
        }
        let deadline = Date().addingTimeInterval(30)
        while process.isRunning, Date() < deadline { usleep(10_000) }
        if process.isRunning {
            kill(process.processIdentifier, SIGKILL)
            process.waitUntilExit()
            _ = done.wait(timeout: .now() + 5)
            return nil
        }
        process.waitUntilExit()
        _ = done.wait(timeout: .now() + 5)
        return collected.withLock {
            Finished(
                status: process.terminationStatus, output: String(decoding: $0.output, as: UTF8.self),
                error: String(decoding: $0.error, as: UTF8.self))
        }
    }

    /// Expects a refusal as for a query that does not parse: exit 64, the message with its
    /// column, the query, and a caret under the field; nothing on standard output. A watch through
    /// the daemon prints the daemon's message without saying "bad query" first.
    func expectRefused(
        _ run: Finished?, column: Int, message: String, _ label: String, saysBadQuery: Bool = true
    ) {
        guard let run else {
            Issue.record("\(label): still running after 30 s")
            return
        }
        #expect(run.status == 64, "\(label): \(run.error)")
        #expect(run.error.contains("bad query") == saysBadQuery, "\(label): \(run.error)")
        #expect(run.error.contains("error at column \(column): "), "\(label): \(run.error)")
        #expect(run.error.contains(message), "\(label): \(run.error)")
        #expect(run.error.contains("\n" + String(repeating: " ", count: column - 1) + "^"), "\(label): \(run.error)")
        #expect(run.output.isEmpty, "\(label): \(run.output)")
    }

    @Test func queryRefusesUnknownFieldsAndMismatchedKinds() throws {
        let path = try makeStore()
        for (query, column, message) in Self.mistakes {
            expectRefused(
                try Self.rillWithin30Seconds(["query", path, query]), column: column, message: message, query)
            expectRefused(
                try Self.rillWithin30Seconds(["query", path, query, "--explain"]), column: column, message: message,
                "explain \(query)")
        }
        let good = try runBuilt("rill", ["query", path, "Book where pages > 300.5 and rating == nil", "--json"])
        #expect(good.status == 0, "\(good.error)")
        #expect(good.output.split(separator: "\n").count == 2)
    }

    @Test func watchOfAMistypedQueryFailsAtOnce() throws {
        let path = try makeStore()
        for (query, column, message) in Self.mistakes {
            expectRefused(
                try Self.rillWithin30Seconds(["watch", path, query]), column: column, message: message, query)
            expectRefused(
                try Self.rillWithin30Seconds(["watch", "--json", "--since", "0", path, query]), column: column,
                message: message, "--since \(query)")
        }
    }

    @Test func theDaemonAnswersFourHundredAndWatchConnectFailsAtOnce() throws {
        let path = try makeStore()
        let daemon = try DaemonProcess(store: path, log: directory.path("serve.log"))
        for (query, column, message) in Self.mistakes {
            let encoded = query.addingPercentEncoding(withAllowedCharacters: .alphanumerics)!
            let code = message.contains("no field") ? "unknownField" : "kindMismatch"
            let body = #"{"query":\#(RecordValue.string(query).jsonString())}"#
            for (label, response) in [
                ("GET /v1/query", try HTTPTestClient(unix: daemon.socket).request("GET", "/v1/query?q=\(encoded)")),
                ("POST /v1/query", try HTTPTestClient(unix: daemon.socket).request("POST", "/v1/query", body: body)),
                (
                    "GET /v1/subscribe",
                    try HTTPTestClient(unix: daemon.socket).request("GET", "/v1/subscribe?q=\(encoded)")
                ),
            ] {
                #expect(response?.status == 400, "\(label) \(query): \(response?.body ?? "no response")")
                let error = response?.json["error"] as? [String: Any]
                #expect(error?["code"] as? String == code, "\(label) \(query): \(response?.body ?? "")")
                let text = error?["message"] as? String ?? ""
                #expect(text.hasPrefix("error at column \(column): "), "\(label) \(query): \(text)")
                #expect(text.contains(message), "\(label) \(query): \(text)")
                #expect(text.hasSuffix("\n" + String(repeating: " ", count: column - 1) + "^"), "\(label): \(text)")
            }
            expectRefused(
                try Self.rillWithin30Seconds(["watch", "--connect", daemon.socket, query]), column: column,
                message: message, "--connect \(query)", saysBadQuery: false)
        }
        // The daemon goes on serving good queries.
        let good = try HTTPTestClient(unix: daemon.socket).request(
            "GET", "/v1/query?q=Book%20where%20pages%20>%20300")
        #expect(good?.status == 200, "\(good?.body ?? "no response")")
        #expect((good?.json["results"] as? [Any])?.count == 2)
        #expect(daemon.stop() == 0)
    }
}
