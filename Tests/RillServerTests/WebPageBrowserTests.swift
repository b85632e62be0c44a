import Foundation
import RillService
import RillTestSupport
import RillWorkloads
import Testing

@testable import Rill
@testable import RillServer

#if canImport(Glibc)
    import Glibc
#endif

/// The live web page of `rill serve` and its JavaScript client, in a headless Chromium driven over
/// the DevTools protocol (Documentation/Protocol.md, "The web page"). The browser tests skip,
/// saying why, only where Chromium cannot run.
@Suite(.serialized) struct WebPageBrowserTests {
    let directory = TemporaryDirectory()
    let token = "web-page-token-\(UInt32.random(in: 0...UInt32.max))"
    static let query = "where value >= 10 sort by value desc, id limit 15"

    // MARK: - Helpers

    /// `rill serve path` over TCP on `port`, with the token.
    func serve(_ path: String, port: UInt16, _ arguments: [String] = [], log: String) throws -> DaemonProcess {
        let tokenFile = directory.path("token")
        try token.write(toFile: tokenFile, atomically: true, encoding: .utf8)
        return try DaemonProcess(
            store: path, arguments: ["--listen", "127.0.0.1:\(port)", "--token-file", tokenFile] + arguments,
            log: directory.path(log))
    }

    /// A browser, or nil after saying why the test skips.
    func browser(_ test: String) -> HeadlessChromium? {
        do {
            return try HeadlessChromium(profile: directory.path("profile"), log: directory.path("chromium.log"))
        } catch {
            print("\(test): skipped, Chromium cannot run here: \(error)")
            return nil
        }
    }

    /// The commit the daemon's store is at.
    static func head(_ client: HTTPTestClient) throws -> UInt64 {
        let response = try #require(client.request("GET", "/v1/health"))
        return try #require((response.json["seq"] as? NSNumber)?.uint64Value)
    }

    /// What the page's table shows: its column names and the text of each live row's cells.
    static func table(_ browser: HeadlessChromium, _ page: String) throws -> (columns: [String], rows: [[String]]) {
        let value = try browser.evaluate(
            """
            ({columns: [...document.querySelectorAll('#results thead th')].map((cell) => cell.textContent),
              rows: [...document.querySelectorAll('#results tbody tr:not(.rill-removed)')]
                .map((row) => [...row.cells].map((cell) => cell.textContent))})
            """, in: page)
        let object = try #require(value as? [String: Any])
        return (object["columns"] as? [String] ?? [], object["rows"] as? [[String]] ?? [])
    }

    /// The rows the table must show for `records` (a response's `results`): each field as the
    /// page writes it.
    static func expectedRows(_ records: [[String: Any]], columns: [String]) -> [[String]] {
        records.map { record in
            columns.map { column in
                switch record[column] {
                case nil, is NSNull: ""
                case let text as String: text
                case let number as NSNumber: number.stringValue
                case let other?: "\(other)"
                }
            }
        }
    }

    /// The page shows commit `head`, and its table holds what `/v1/query` answers (as of `asOf`, when given).
    static func expectPageMatches(
        _ browser: HeadlessChromium, _ page: String, _ client: HTTPTestClient, head: UInt64, asOf: UInt64? = nil,
        _ label: String
    ) throws {
        let describe = """
            ({seq: document.getElementById('seq').textContent, state: document.getElementById('state').dataset.state,
              message: document.getElementById('message').textContent})
            """
        try browser.wait(
            until: "document.getElementById('seq').textContent === '\(head)'", in: page, describe: describe)
        if let asOf {
            try browser.wait(until: "document.getElementById('results').dataset.asOf === '\(asOf)'", in: page)
        } else {
            try browser.wait(until: "document.getElementById('results').dataset.asOf === undefined", in: page)
        }
        let text = "Counter " + query
        var target = "/v1/query?q=" + text.addingPercentEncoding(withAllowedCharacters: .alphanumerics)!
        if let asOf { target += "&as_of=\(asOf)" }
        let response = try #require(client.request("GET", target))
        let records = try #require(response.json["results"] as? [[String: Any]], "\(response.body)")
        let shown = try table(browser, page)
        #expect(shown.columns.sorted() == ["id", "payload", "value"], "\(label)")
        #expect(shown.rows == expectedRows(records, columns: shown.columns), "\(label): the table is not the query's")
    }

    /// A save over the daemon's socket; returns its commit.
    @discardableResult
    static func save(_ client: HTTPTestClient, _ records: [(id: Int, value: Int, payload: String)]) throws -> UInt64 {
        let changes = records.map {
            #"{"op":"insert","entity":"Counter","record":{"id":\#($0.id),"value":\#($0.value),"payload":"\#($0.payload)"}}"#
        }
        let response = try #require(
            client.request("POST", "/v1/save", body: "[" + changes.joined(separator: ",") + "]"))
        #expect(response.status == 200, "\(response.body)")
        return (response.json["seq"] as? NSNumber)?.uint64Value ?? 0
    }

    /// Random saves: new records, moved ones (a new value), updated ones (a new payload), and
    /// records leaving the query (a value under 10).
    static func burst(
        _ random: inout SeededGenerator, _ write: ([(id: Int, value: Int, payload: String)]) throws -> Void
    )
        throws
    {
        for _ in 0..<Int.random(in: 3...12, using: &random) {
            var records: [(id: Int, value: Int, payload: String)] = []
            for _ in 0..<Int.random(in: 1...3, using: &random) {
                let id = Int.random(in: 0..<60, using: &random)
                let value = Int.random(in: 0..<4, using: &random) == 0 ? id : Int.random(in: 0..<80, using: &random)
                records.append((id, value, "p\(Int.random(in: 0..<3, using: &random))"))
            }
            try write(records)
        }
    }

    // MARK: - The page over HTTP

    @Test func pageIsServedWithoutATokenAndTheAPIOnlyWithOne() throws {
        let path = try directory.counterStore(records: 3)
        let port = try freeTCPPort()
        let daemon = try serve(path, port: port, log: "serve.log")
        for target in ["/", "/index.html", "/ui/page.js", "/ui/page.css", "/ui/icon.svg", "/ui/rill.js"] {
            let response = try #require(try HTTPTestClient(port: port).request("GET", target))
            #expect(response.status == 200, "\(target): \(response.body)")
            let asset = WebPageAsset.at(target)
            #expect(asset != nil && response.body == asset!.text, "\(target)")
            // The page's files hold no data.
            #expect(!response.body.contains("\"seq\":"), "\(target)")
        }
        let missing = try #require(try HTTPTestClient(port: port).request("GET", "/ui/nothing.js"))
        #expect(missing.status == 404 && missing.body.contains("notFound"), "\(missing.body)")
        let posted = try #require(try HTTPTestClient(port: port).request("POST", "/", body: "{}"))
        #expect(posted.status == 405, "\(posted.body)")
        // The API still asks for the token, on a connection that fetched the page too.
        let client = try HTTPTestClient(port: port)
        #expect(client.request("GET", "/")?.status == 200)
        #expect(client.request("GET", "/v1/query?q=Counter")?.status == 401)
        let authorized = try HTTPTestClient(port: port)
        #expect(authorized.request("GET", "/")?.status == 200)
        #expect(
            authorized.request("GET", "/v1/query?q=Counter", headers: ["Authorization: Bearer \(token)"])?.status == 200
        )
        #expect(daemon.stop() == 0)
    }

    // MARK: - The page in a browser

    // A browser loads the machine for seconds: not while a test judges latencies against a
    // baseline of its own (`MachineExclusive`).
    @Test func pageFollowsRandomSavesAcrossRestartsAndGoesBackInTime() async throws {
        try await MachineExclusive.run { try checkPageFollowsRandomSaves() }
    }

    private func checkPageFollowsRandomSaves() throws {
        let path = try directory.counterStore(records: 40)
        let port = try freeTCPPort()
        var daemon = try serve(path, port: port, log: "serve-1.log")
        guard let browser = browser("pageFollowsRandomSavesAcrossRestartsAndGoesBackInTime") else { return }
        var random = SeededGenerator(label: "web page saves")
        var client = try HTTPTestClient(unix: daemon.socket)

        // The page asks for the entities, then the user picks one and types a query.
        // Without the token the page asks for it; typed in its field, the entities come.
        let page = try browser.open("http://127.0.0.1:\(port)/#progress=0.2")
        try browser.wait(
            until: "document.getElementById('message').textContent.includes('needs its token')", in: page,
            describe: "document.getElementById('message').textContent")
        _ = try browser.evaluate(
            """
            document.getElementById('token').value = \(HeadlessChromium.jsString(token));
            document.getElementById('token').dispatchEvent(new Event('change'));
            """, in: page)
        try browser.wait(until: "document.querySelector('#entity option[value=\"Counter\"]') !== null", in: page)
        let choose = { (query: String) in
            """
            document.getElementById('entity').value = 'Counter';
            document.getElementById('query').value = \(HeadlessChromium.jsString(query));
            document.getElementById('form').requestSubmit();
            """
        }
        // A query the daemon refuses: the page says why.
        _ = try browser.evaluate(choose("where valu >= 10"), in: page)
        try browser.wait(
            until: """
                document.getElementById('state').dataset.state === 'failed'
                  && document.getElementById('message').textContent.includes('did you mean value?')
                """, in: page, describe: "document.getElementById('message').textContent")
        // Typed with the entity's name too, the query is the same.
        _ = try browser.evaluate(choose("Counter " + Self.query), in: page)
        try browser.wait(until: "document.getElementById('state').dataset.state === 'live'", in: page)
        try Self.expectPageMatches(browser, page, client, head: try Self.head(client), "first results")

        // Each kind of change marks its row.
        let inserted = try Self.save(client, [(999, 1000, "new")])
        try Self.expectPageMatches(browser, page, client, head: inserted, "insertion")
        let firstRow = "document.querySelector('#results tbody tr:not(.rill-removed)')"
        #expect(try browser.evaluate("\(firstRow).className", in: page) as? String == "rill-inserted")
        let updated = try Self.save(client, [(999, 1000, "changed")])
        try Self.expectPageMatches(browser, page, client, head: updated, "update")
        #expect(try browser.evaluate("\(firstRow).className", in: page) as? String == "rill-updated")
        let moved = try Self.save(client, [(999, 30, "changed")])
        try Self.expectPageMatches(browser, page, client, head: moved, "move")
        let row999 =
            "[...document.querySelectorAll('#results tbody tr')].find((row) => row.cells[0].textContent === '999')"
        #expect(try browser.evaluate("\(row999).className", in: page) as? String == "rill-moved")
        _ = try browser.evaluate(
            """
            window.removedIDs = [];
            new MutationObserver((mutations) => {
              for (const mutation of mutations) {
                if (mutation.target.classList?.contains('rill-removed')) {
                  window.removedIDs.push(mutation.target.cells[0].textContent);
                }
              }
            }).observe(document.querySelector('#results tbody'), {attributes: true, attributeFilter: ['class'], subtree: true});
            """, in: page)
        let removed = try Self.save(client, [(999, 5, "changed")])
        try browser.wait(until: "window.removedIDs.includes('999')", in: page)
        try Self.expectPageMatches(browser, page, client, head: removed, "removal")

        // Random saves in bursts; after each, the page catches up with the daemon.
        var past: UInt64 = 0
        for round in 0..<3 {
            try Self.burst(&random) { try Self.save(client, $0) }
            let head = try Self.head(client)
            if round == 0 { past = head }
            try Self.expectPageMatches(browser, page, client, head: head, "burst \(round)")
        }

        // The daemon stops; saves go on without it (the library's); the page reconnects to the
        // next daemon and resumes after the last commit it had.
        let container = try ModelContainer(
            for: Counter.self, configurations: ModelConfiguration(url: URL(fileURLWithPath: path)))
        let context = ModelContext(container)
        let libraryWrite: ([(id: Int, value: Int, payload: String)]) throws -> Void = { records in
            for record in records {
                context.insert(Counter(id: record.id, value: record.value, payload: record.payload))
            }
            try context.save()
        }
        for restart in 1...2 {
            #expect(daemon.stop() == 0)
            try browser.wait(until: "document.getElementById('state').dataset.state === 'reconnecting'", in: page)
            try Self.burst(&random, libraryWrite)
            // Two commits at least, whatever the burst wrote.
            try libraryWrite([(50, 50, "restart \(restart) a")])
            try libraryWrite([(51, 51, "restart \(restart) b")])
            // The second daemon resumes 1 commit at most: the page is sent a reset instead.
            daemon = try serve(
                path, port: port, restart == 2 ? ["--resume-limit", "1"] : [], log: "serve-\(restart + 1).log")
            client = try HTTPTestClient(unix: daemon.socket)
            try Self.expectPageMatches(browser, page, client, head: try Self.head(client), "restart \(restart)")
            let resets = try browser.evaluate("document.getElementById('seq').dataset.resets ?? '0'", in: page)
            #expect(resets as? String == (restart == 2 ? "1" : "0"), "restart \(restart)")
            try Self.burst(&random) { try Self.save(client, $0) }
            try Self.expectPageMatches(browser, page, client, head: try Self.head(client), "after restart \(restart)")
            guard restart == 1 else { continue }
            // A stream the browser does not open again by itself (refused, or given up on): the
            // client asks the daemon, then subscribes again by hand with `since`, its last commit.
            let subscription = "window.rillPage.subscription"
            let last = try #require(try browser.evaluate("\(subscription).seq", in: page) as? Int)
            _ = try browser.evaluate("\(subscription).source.close()", in: page)
            try Self.burst(&random) { try Self.save(client, $0) }
            _ = try browser.evaluate("\(subscription).recover()", in: page)
            try Self.expectPageMatches(browser, page, client, head: try Self.head(client), "resubscribed")
            #expect(daemon.logs("from commit \(last)"), "\(daemon.logText)")
            #expect(
                try browser.evaluate("document.getElementById('seq').dataset.resets ?? '0'", in: page) as? String == "0"
            )
        }

        // The slider goes back to a commit: the table shows the results as of then, and stays
        // there while commits go on; at its right end it is live again.
        let slide = { (value: String) in
            """
            {
              const slider = document.getElementById('slider');
              slider.value = \(value);
              slider.dispatchEvent(new Event('input'));
            }
            """
        }
        _ = try browser.evaluate(slide(String(past)), in: page)
        try Self.expectPageMatches(browser, page, client, head: try Self.head(client), asOf: past, "as of \(past)")
        try Self.burst(&random) { try Self.save(client, $0) }
        try Self.expectPageMatches(browser, page, client, head: try Self.head(client), asOf: past, "still \(past)")
        _ = try browser.evaluate(slide("slider.max"), in: page)
        try Self.expectPageMatches(browser, page, client, head: try Self.head(client), "live again")
        // The page asked the daemon for nothing but its files and the API (no `/favicon.ico`).
        let firstLog = (try? String(contentsOfFile: directory.path("serve-1.log"), encoding: .utf8)) ?? ""
        #expect(firstLog.contains("GET /v1/schema 401") && !firstLog.contains("favicon"), "\(firstLog)")
        #expect(daemon.stop() == 0)
    }

    // MARK: - The client's apply against ResultsChange.apply

    /// A random change of random results, and the results it makes: records leave, move, enter
    /// and change in place. Records are `{"id":n,"v":"…"}`.
    static func randomChange(
        _ random: inout SeededGenerator, nextID: inout Int
    ) -> (before: [QueryRow], change: ResultsChange<QueryRow>, after: [QueryRow]) {
        func row(_ id: Int, _ version: String) -> QueryRow {
            QueryRow(
                key: [],
                record: .map([
                    RecordField(name: "id", value: .int(Int64(id))), RecordField(name: "v", value: .string(version)),
                ]))
        }
        func id(_ row: QueryRow) -> Int {
            if case .map(let fields) = row.record, case .int(let value) = fields[0].value { return Int(value) }
            return -1
        }
        var before: [QueryRow] = []
        for _ in 0..<Int.random(in: 0...12, using: &random) {
            before.append(row(nextID, "old"))
            nextID += 1
        }
        // Each record leaves (0), moves (1) or stays (2, 3).
        let fates = before.map { _ in Int.random(in: 0..<4, using: &random) }
        var after = zip(before, fates).filter { $0.1 >= 2 }.map(\.0)
        var entering: [(row: QueryRow, from: Int?)] = []
        for (offset, fate) in fates.enumerated() where fate == 1 {
            entering.append((row(id(before[offset]), "moved"), offset))
        }
        for _ in 0..<Int.random(in: 0...4, using: &random) {
            entering.append((row(nextID, "new"), nil))
            nextID += 1
        }
        var sources: [Int: Int] = [:]  // id → offset before, for moved records
        for (row, from) in entering {
            after.insert(row, at: Int.random(in: 0...after.count, using: &random))
            if let from { sources[id(row)] = from }
        }
        var change = ResultsChange<QueryRow>(sequence: 1, removals: [], insertions: [], moves: [], updates: [])
        for (offset, fate) in fates.enumerated() where fate == 0 {
            change.removals.append(.init(offset: offset, element: before[offset]))
        }
        let stayed = Dictionary(
            uniqueKeysWithValues: zip(before, fates).enumerated().filter { $0.element.1 >= 2 }.map {
                (id($0.element.0), $0.offset)
            })
        for (offset, element) in after.enumerated() {
            let key = id(element)
            if let from = sources[key] {
                change.moves.append(.init(from: from, to: offset, oldElement: before[from], element: element))
            } else if let old = stayed[key] {
                guard Int.random(in: 0..<3, using: &random) == 0 else { continue }
                let updated = row(key, "updated")
                after[offset] = updated
                change.updates.append(.init(oldOffset: old, offset: offset, oldElement: before[old], element: updated))
            } else {
                change.insertions.append(.init(offset: offset, element: element))
            }
        }
        return (before, change, after)
    }

    // A browser loads the machine for seconds: not while a test judges latencies against a
    // baseline of its own (`MachineExclusive`).
    @Test func clientAppliesChangesAsResultsChangeDoes() async throws {
        try await MachineExclusive.run { try checkClientAppliesChanges() }
    }

    private func checkClientAppliesChanges() throws {
        let path = try directory.counterStore(records: 1)
        let port = try freeTCPPort()
        let daemon = try serve(path, port: port, log: "serve.log")
        guard let browser = browser("clientAppliesChangesAsResultsChangeDoes") else { return }
        var random = SeededGenerator(label: "web page apply")
        var nextID = 0
        var cases: [String] = []
        var expected: [[String]] = []
        for _ in 0..<400 {
            let (before, change, after) = Self.randomChange(&random, nextID: &nextID)
            let applied = change.apply(to: before)
            // The oracle's own check: Swift's apply makes the results the change was made from.
            let texts = applied.map { $0.record.jsonString() }
            #expect(texts == after.map { $0.record.jsonString() }, "\(change)")
            expected.append(texts)
            let records = RecordValue.array(before.map(\.record)).jsonString()
            cases.append(#"{"before":\#(records),"change":\#(RecordLiveQuery.changeJSON(change).jsonString())}"#)
        }
        // The token and the query in the page's address: it subscribes at once.
        let page = try browser.open("http://127.0.0.1:\(port)/#token=\(token)&entity=Counter&q=sort%20by%20id")
        try browser.wait(until: "document.getElementById('state').dataset.state === 'live'", in: page)
        #expect(try Self.table(browser, page).rows == [["0", "0", ""]])
        let value = try browser.evaluate(
            """
            (async () => {
              const client = await import('/ui/rill.js');
              const cases = [\(cases.joined(separator: ","))];
              const results = cases.map((each) => client.applyChange(each.before, each.change).map((record) => JSON.stringify(record)));
              // Changes that do not fit the records are refused, and leave them as they were.
              const change = (parts) => ({removals: [], insertions: [], moves: [], updates: [], ...parts});
              const misfits = [
                [[], change({removals: [{offset: 0}]})],
                [[{id: 1}], change({removals: [{offset: 1}]})],
                [[{id: 1}, {id: 2}], change({removals: [{offset: 0}], moves: [{from: 0, to: 0, record: {id: 1}}]})],
                [[{id: 1}], change({insertions: [{offset: 2, record: {id: 2}}]})],
                [[{id: 1}], change({insertions: [{offset: 0, record: {id: 2}}, {offset: 0, record: {id: 3}}]})],
                [[{id: 1}], change({updates: [{oldOffset: 0, offset: 1, record: {id: 1}}]})],
                [[{id: 1}], change({removals: [{offset: -1}]})],
                [[{id: 1}], change({removals: [{offset: 0.5}]})],
                [[{id: 1}], {removals: []}],
              ];
              const refused = misfits.map(([records, misfit]) => {
                const copy = JSON.stringify(records);
                try {
                  client.applyChange(records, misfit);
                  return 'applied';
                } catch (error) {
                  return error.code + (JSON.stringify(records) === copy ? '' : ' after changing the records');
                }
              });
              return {results, refused};
            })()
            """, in: page)
        let object = try #require(value as? [String: Any])
        let results = try #require(object["results"] as? [[String]])
        #expect(results.count == expected.count)
        var mismatches = 0
        for (index, (javaScript, swift)) in zip(results, expected).enumerated() where javaScript != swift {
            mismatches += 1
            if mismatches <= 3 { Issue.record("case \(index): JavaScript \(javaScript), Swift \(swift)") }
        }
        #expect(mismatches == 0)
        #expect(object["refused"] as? [String] == Array(repeating: "badChange", count: 9))

        // `subscribe` with `since` and the records held then resumes after that commit: changes
        // only, applied to those records, up to the daemon's.
        let client = try HTTPTestClient(unix: daemon.socket)
        for id in 1...5 { try Self.save(client, [(id, id * 10, "resumed")]) }
        try Self.save(client, [(0, 99, "moved last")])
        let head = try Self.head(client)
        let resumed = try browser.evaluate(
            """
            (async () => {
              const client = await import('/ui/rill.js');
              const token = \(HeadlessChromium.jsString(token));
              const past = await client.query('Counter sort by value', {asOf: 2, token});
              return await new Promise((resolve, reject) => {
                const subscription = client.subscribe('Counter', 'sort by value', {
                  token, since: past.seq, records: past.results,
                  onevent(event, live) {
                    if (event.type === 'results') reject(new Error('results sent to a resumed subscription'));
                    if (live.seq === \(head)) {
                      live.close();
                      resolve(JSON.stringify(live.records));
                    }
                  },
                });
                setTimeout(() => reject(new Error('no catch-up, at ' + subscription.seq)), 15000);
              });
            })()
            """, in: page)
        let now = try #require(client.request("GET", "/v1/query?q=Counter%20sort%20by%20value"))
        let expectedRecords = try #require(now.json["results"] as? [NSDictionary])
        let resumedRecords = try JSONSerialization.jsonObject(with: Data((resumed as? String ?? "").utf8))
        #expect(resumedRecords as? [NSDictionary] == expectedRecords)
        #expect(daemon.logs("from commit 2"), "\(daemon.logText)")
        #expect(daemon.stop() == 0)
    }
}
