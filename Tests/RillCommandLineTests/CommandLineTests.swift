import Foundation
import RillTestSupport
import RillWorkloads
import Testing

@testable import Rill

/// The built `rill` and the sample, run as real processes.
@Suite struct CommandLineTests {
    let directory = TemporaryDirectory()

    typealias Run = ProcessRun

    func run(_ executable: String, _ arguments: [String]) throws -> Run { try runBuilt(executable, arguments) }

    func rill(_ arguments: String...) throws -> Run { try run("rill", arguments) }

    func makeStore() throws -> String {
        let path = directory.path("store")
        let container = try ModelContainer(
            for: Book.self, Author.self, Counter.self,
            configurations: ModelConfiguration(url: URL(fileURLWithPath: path)))
        let context = container.mainContext
        context.author = "cli-test"
        context.insert(Author(id: "lem", name: "Stanisław \"Staszek\" Lem", born: 1921))
        context.insert(Counter(id: -5, value: 7))
        try context.save()
        context.insert(Author(id: "lem", name: "Stanisław Lem", born: 1921))
        context.delete(Counter(id: -5, value: 7))
        try context.save()
        return path
    }

    @Test func helpListsCommandsAndExitsZero() throws {
        let result = try rill("--help")
        #expect(result.status == 0)
        let commands = [
            "query", "watch", "insert", "update", "delete", "import", "export", "log", "get", "stats", "check", "serve",
        ]
        for command in commands {
            #expect(result.output.contains(command))
            let help = try rill(command, "--help")
            #expect(help.status == 0, "\(command) --help")
            #expect(help.output.contains("USAGE: rill \(command)"), "\(command) --help")
        }
        let logHelp = try rill("log", "--help")
        #expect(logHelp.status == 0)
        #expect(logHelp.output.contains("--since"))
    }

    @Test func badUsageExitsSixtyFour() throws {
        for arguments in [
            [], ["frobnicate"], ["log"], ["log", "a", "b"], ["log", "x", "--limit"], ["log", "x", "--limit", "ten"],
            ["stats", "x", "--nope"],
        ] {
            let result = try run("rill", arguments)
            #expect(result.status == 64, "\(arguments): \(result.error)")
            #expect(!result.error.isEmpty)
            #expect(result.output.isEmpty)
        }
    }

    @Test func logPrintsCommitsAsJSONLines() throws {
        let path = try makeStore()
        let result = try rill("log", path)
        #expect(result.status == 0, "\(result.error)")
        let lines = result.output.split(separator: "\n")
        #expect(lines.count == 2)
        let first = try JSONSerialization.jsonObject(with: Data(lines[0].utf8)) as! [String: Any]
        #expect(first["seq"] as? Int == 1)
        #expect(first["author"] as? String == "cli-test")
        let changes = first["changes"] as! [[String: Any]]
        #expect(changes.map { $0["op"] as? String } == ["insert", "insert"])
        #expect(changes[0]["id"] as? String == "lem")
        #expect((changes[0]["record"] as? [String: Any])?["name"] as? String == "Stanisław \"Staszek\" Lem")
        #expect(changes[1]["id"] as? Int == -5)
        let second = try JSONSerialization.jsonObject(with: Data(lines[1].utf8)) as! [String: Any]
        let updates = second["changes"] as! [[String: Any]]
        #expect(updates.map { $0["op"] as? String } == ["update", "delete"])
        #expect(updates[0]["fields"] as? [String] == ["name"])
        #expect(updates[1]["record"] == nil)

        let tail = try rill("log", path, "--since", "1")
        #expect(tail.output.split(separator: "\n").count == 1)
        #expect(try rill("log", path, "--limit", "1").output.split(separator: "\n").count == 1)
        #expect(try rill("log", path, "--since=2").output.isEmpty)
    }

    @Test func getPrintsOneRecord() throws {
        let path = try makeStore()
        let result = try rill("get", path, "Author", "lem")
        #expect(result.status == 0, "\(result.error)")
        let record = try JSONSerialization.jsonObject(with: Data(result.output.utf8)) as! [String: Any]
        #expect(record["name"] as? String == "Stanisław Lem")
        #expect(record["born"] as? Int == 1921)

        let missing = try rill("get", path, "Author", "nobody")
        #expect(missing.status == 1)
        #expect(missing.error.contains("no Author"))
        let unknown = try rill("get", path, "Planet", "x")
        #expect(unknown.status == 1)
        #expect(unknown.error.contains("Planet"))
        let badID = try rill("get", path, "Counter", "abc")
        #expect(badID.status == 1)
        #expect(badID.error.contains("Int"))
    }

    @Test func statsReportsEntitiesAndSizes() throws {
        let path = try makeStore()
        let text = try rill("stats", path)
        #expect(text.status == 0)
        #expect(text.output.contains("log head:  2"))
        let json = try rill("stats", path, "--json")
        let stats = try JSONSerialization.jsonObject(with: Data(json.output.utf8)) as! [String: Any]
        #expect(stats["logHead"] as? Int == 2)
        let entities = stats["entities"] as! [String: Int]
        #expect(entities == ["Author": 1, "Book": 0, "Counter": 0])
        #expect((stats["fileSize"] as? Int ?? 0) > 0)
    }

    @Test func missingStoreIsAFailureAndCreatesNothing() throws {
        let path = directory.path("nothing-here")
        let result = try rill("stats", path)
        #expect(result.status == 1)
        #expect(result.error.contains("no store"))
        #expect(!FileManager.default.fileExists(atPath: path))
    }

    @Test func librarySampleRunsAndCarriesOver() throws {
        let path = directory.path("library")
        let first = try run("library-demo", [path])
        #expect(first.status == 0, "\(first.error)")
        #expect(first.output.contains("Stocked the shelf (commit 1)"))
        #expect(first.output.contains("Unread: 8 of 9 books"))
        #expect(first.output.contains("Finished \"Dune\" (commit 2)"))
        let second = try run("library-demo", [path])
        #expect(second.output.contains("already stocked"))
        #expect(second.output.contains("Unread: 7 of 9 books"))
        let log = try rill("log", path)
        #expect(log.output.split(separator: "\n").count == 3)
    }

    @Test func settingsSampleCreatesTheDefaultOnceChangesItAndFindsItAgain() throws {
        let path = directory.path("settings")
        let first = try run("settings-demo", [path])
        #expect(first.status == 0, "\(first.error)")
        #expect(
            first.output.contains("Created the default settings (commit 1).")
                && first.output.contains("theme system, font size 14, notifications true"), "\(first.output)")
        let changed = try run("settings-demo", [path, "--font-size", "16", "--theme", "dark"])
        #expect(changed.output.contains("Found the settings."), "\(changed.output)")
        #expect(changed.output.contains("Saved the settings (commit 2)."))
        #expect(
            changed.output.contains("live: font size 14 → 16") && changed.output.contains("live: theme system → dark"))
        let again = try run("settings-demo", [path])
        #expect(again.output.contains("Found the settings.") && again.output.contains("theme dark, font size 16"))
        #expect(try rill("log", path).output.split(separator: "\n").count == 2)
        #expect(try run("settings-demo", [path, "--font-size", "200"]).status == 64)
    }

    @Test func tasksSampleKeepsItsListCurrentSearchesAndServesTheJournalFromAnIndex() throws {
        let result = try run("tasks-demo", [directory.path("tasks")])
        #expect(result.status == 0, "\(result.error)")
        let expected = [
            "Add three tasks:", "  + Call plumber at 0", "  + Pay rent at 1", "  + Write report at 2",
            "Incomplete: Call plumber (day 1, p2), Pay rent (day 2, p3), Write report (day 2, p1)",
            "Toggle \"Call plumber\" done:", "  - Call plumber (was at 0)",
            "Incomplete: Pay rent (day 2, p3), Write report (day 2, p1)", "Delete \"Write report\":",
            "  - Write report (was at 1)", "Incomplete: Pay rent (day 2, p3)",
            "Search \"numbers\": Numbers for Bob, Budget",
            "Journal from day 19990, first 5: entry 19990, entry 19991, entry 19992, entry 19993, entry 19994",
        ]
        let lines = result.output.split(separator: "\n").map(String.init)
        #expect(Array(lines.prefix(expected.count)) == expected, "\(result.output)")
        #expect(lines.contains { $0.hasPrefix("index JournalEntry(day): 1 key range") }, "\(result.output)")
        #expect(lines.contains("order: from the index, no sort needed") && lines.contains("window: offset 0, limit 5"))
    }

    @Test func recipesDemoFiltersByKindSearchesThroughIngredientsAndFollowsThem() throws {
        let result = try run("recipes-demo", [directory.path("recipes")])
        #expect(result.status == 0, "\(result.error)")
        let expected = [
            "Beverages: Ginger tea, Hot chocolate, Iced tea",
            "Mentions \"lemon\": Iced tea, Lemon drizzle",
            "Baked goods mentioning \"lemon\": Lemon drizzle",
            "Next planned from day 2: Hot chocolate",
            "Baked goods with \"chocolate\": none",
            "Rename the ingredient cocoa to \"dark chocolate\":", "  + Brownies at 0",
            "Baked goods with \"chocolate\": Brownies",
            "Add a chocolate loaf:", "  + Chocolate loaf at 1",
            "Baked goods with \"chocolate\": Brownies, Chocolate loaf",
            "Delete the ingredient eggs:", "  ~ Brownies at 0", "  ~ Chocolate loaf at 1",
            "Baked goods with \"chocolate\": Brownies, Chocolate loaf",
            "Brownies now use: cocoa, butter, sugar",
            "Commits for the delete: 1",
        ]
        #expect(result.output.split(separator: "\n").map(String.init) == expected, "\(result.output)")
    }

    @Test func queryPrintsMatchingRecords() throws {
        let path = directory.path("books")
        let container = try ModelContainer(
            for: Book.self, configurations: ModelConfiguration(url: URL(fileURLWithPath: path)))
        for (title, pages, read) in [
            ("Dune", 412, true), ("Emma", 474, false), ("Ubik", 202, false), ("Café Society", 350, false),
        ] {
            container.mainContext.insert(Book(title: title, author: "A", pages: pages, isRead: read))
        }
        try container.mainContext.save()

        let json = try rill("query", path, "Book where isRead == false and pages > 300 sort by pages desc", "--json")
        #expect(json.status == 0, "\(json.error)")
        let titles = json.output.split(separator: "\n").map { line in
            (try! JSONSerialization.jsonObject(with: Data(line.utf8)) as! [String: Any])["title"] as! String
        }
        #expect(titles == ["Emma", "Café Society"])

        let table = try rill("query", path, "Book where title contains[cd] \"cafe\"")
        #expect(table.status == 0)
        #expect(table.output.contains("Café Society"))
        #expect(table.output.contains("(1 record)"))

        let explain = try rill("query", path, "Book where pages > 300 limit 1", "--explain")
        #expect(explain.status == 0)
        #expect(explain.output.contains("scan"))
        #expect(explain.output.contains("pages > 300"))

        let bad = try rill("query", path, "Book where pages >")
        #expect(bad.status == 64)
        #expect(bad.error.contains("column"))
        #expect(bad.error.contains("^"))
        let unknown = try rill("query", path, "Planet")
        #expect(unknown.status == 1)
    }
}
