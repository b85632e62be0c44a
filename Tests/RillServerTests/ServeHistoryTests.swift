import Foundation
import RillTestSupport
import RillWorkloads
import Testing

@testable import Rill

/// `GET /v1/history` of the built daemon: the same commits `rill log` prints for the same
/// filters, in pages that `more` and `since` walk, and typed errors for bad parameters.
@Suite struct ServeHistoryTests {
    let directory = TemporaryDirectory()

    /// Commits as JSON text with sorted keys, for comparing answers.
    static func canonical(_ commits: [Any]) throws -> [String] {
        try commits.map {
            String(decoding: try JSONSerialization.data(withJSONObject: $0, options: [.sortedKeys]), as: UTF8.self)
        }
    }

    @Test func historyAnswersWhatRillLogPrints() throws {
        let path = directory.path("store")
        let container = try ModelContainer(
            for: Counter.self, configurations: ModelConfiguration(url: URL(fileURLWithPath: path)))
        var random = SeededGenerator(label: "serve history")
        let context = container.mainContext
        for round in 0..<80 {
            context.author = ["alice", "bob", nil].randomElement(using: &random)!
            let id = Int.random(in: 0..<10, using: &random)
            if round % 5 == 4 {
                context.delete(Counter(id: id, value: 0))
            } else {
                context.insert(Counter(id: id, value: Int.random(in: 0..<4, using: &random), payload: "p"))
            }
            try context.save()
        }
        let head = try container.store.head()
        let daemon = try DaemonProcess(store: path, log: directory.path("serve.log"))
        let client = try HTTPTestClient(unix: daemon.socket)
        for (query, arguments) in [
            ("", [String]()),
            ("since=30&until=60", ["--since", "30", "--until", "60"]),
            ("author=alice&before_after=true", ["--author", "alice", "--before-after"]),
            ("entity=Counter&order=reverse&limit=7", ["--entity", "Counter", "--reverse", "--limit", "7"]),
        ] {
            let response = try #require(client.request("GET", "/v1/history?" + query))
            #expect(response.status == 200, "\(query): \(response.body)")
            #expect((response.json["seq"] as? NSNumber)?.uint64Value == head)
            let printed = try runBuilt("rill", ["log", path] + arguments)
            let lines = try printed.output.split(separator: "\n").map {
                try JSONSerialization.jsonObject(with: Data($0.utf8))
            }
            let commits = try #require(response.json["commits"] as? [Any])
            #expect(!commits.isEmpty)
            #expect(try Self.canonical(commits) == Self.canonical(lines), "\(query)")
        }
        // Pages: `more` until the last, each from the last commit of the one before.
        var since: UInt64 = 0
        var pages = 0
        var seen: [UInt64] = []
        while true {
            let response = try #require(client.request("GET", "/v1/history?limit=25&since=\(since)"))
            let commits = try #require(response.json["commits"] as? [[String: Any]])
            seen += commits.map { ($0["seq"] as! NSNumber).uint64Value }
            pages += 1
            guard response.json["more"] as? Bool == true, let last = seen.last else { break }
            since = last
        }
        // A full page says there may be more: the last one is short, or empty after a full one.
        #expect(seen == Array(1...head) && pages == Int(head) / 25 + 1, "\(pages) pages of \(head) commits")

        for (target, status, code, words) in [
            ("/v1/history?limit=-1", 400, "badParameter", "limit takes a whole number from 0 to 100000; got '-1'"),
            (
                "/v1/history?since=soon", 400, "badParameter",
                "since takes a commit's sequence number or an ISO-8601 date"
            ),
            ("/v1/history?order=sideways", 400, "badParameter", "order takes forward or reverse; got 'sideways'"),
            ("/v1/history?entity=a,,b", 400, "badParameter", "entity takes names separated by commas"),
            ("/v1/history?entity=Nope", 404, "unknownEntity", "the store has no entity Nope (it has: Counter)"),
            ("/v1/history?entity=Counter,Nope", 404, "unknownEntity", "the store has no entity Nope"),
            ("/v1/history?since=\(head + 1)", 400, "misuse", "the log's last commit is \(head)"),
            ("/v1/history?sinc=5", 400, "unknownParameter", "has no parameter 'sinc' (did you mean 'since'?)"),
            ("/v1/query?q=Counter&asof=3", 400, "unknownParameter", "no parameter 'asof' (did you mean 'as_of'?)"),
            ("/v1/health?verbose=1", 400, "unknownParameter", "/v1/health has no parameter 'verbose'; it takes none"),
            ("/v1/subscribe?q=Counter&sincee=1", 400, "unknownParameter", "(did you mean 'since'?)"),
        ] {
            let response = try #require(client.request("GET", target))
            let error = response.json["error"] as? [String: Any]
            #expect(response.status == status && error?["code"] as? String == code, "\(target): \(response.body)")
            #expect((error?["message"] as? String)?.contains(words) == true, "\(target): \(response.body)")
        }
        #expect(client.request("POST", "/v1/history", body: "")?.status == 405)

        // A query as of a commit answers what rill query --as-of prints, with that commit's seq.
        let query = "Counter sort by value desc, payload limit 5"
        let encoded = query.addingPercentEncoding(withAllowedCharacters: .alphanumerics)!
        for sequence in [0, 1, head / 2, head] {
            let response = try #require(client.request("GET", "/v1/query?as_of=\(sequence)&q=" + encoded))
            #expect(response.status == 200, "\(response.body)")
            #expect((response.json["seq"] as? NSNumber)?.uint64Value == sequence)
            let printed = try runBuilt("rill", ["query", "--json", "--as-of", "\(sequence)", path, query])
            let lines = try printed.output.split(separator: "\n").map {
                try JSONSerialization.jsonObject(with: Data($0.utf8))
            }
            #expect(try Self.canonical(response.json["results"] as! [Any]) == Self.canonical(lines))
        }
        // The schema, as rill schema --json prints it.
        let schema = try #require(client.request("GET", "/v1/schema?entity=Counter"))
        let printedSchema = try runBuilt("rill", ["schema", "--json", path, "Counter"])
        #expect(schema.status == 200)
        #expect(
            schema.body.trimmingCharacters(in: .whitespacesAndNewlines)
                == printedSchema.output.trimmingCharacters(in: .whitespacesAndNewlines), "\(printedSchema.output)")
        #expect(schema.body.contains(#""schema":{"version":1"#))
        #expect(client.request("GET", "/v1/schema?entity=Nope")?.status == 404)
        let late = try #require(client.request("GET", "/v1/query?as_of=\(head + 1)&q=Counter"))
        #expect(late.status == 400 && late.body.contains("misuse"))
        let bad = try #require(client.request("GET", "/v1/query?as_of=later&q=Counter"))
        #expect(bad.status == 400 && bad.body.contains("badParameter") && bad.body.contains("as_of takes"))
    }
}
