import Foundation
import RillStorage
import RillTestSupport
import RillWorkloads
import Testing

@testable import Rill

/// Indexes over values of any length and identifiers up to their limit: saves succeed, the
/// indexes stay exact, and every query (equality, `in`, compound keys, counts, sorts served by an
/// index's order, live queries) answers as brute force does.
@Suite struct LongIndexValueTests {
    let directory = TemporaryDirectory()

    var url: URL { directory.url.appendingPathComponent("store") }

    struct Memo: PersistentModel, Equatable {
        static let entityName = "Memo"
        var id: String
        var title: String
        var year: Int

        static let indexes: [ModelIndex<Memo>] = [ModelIndex(\.title), ModelIndex(\.title, \.year), ModelIndex(\.year)]
    }

    /// The same entity without indexes: a store written before they were declared.
    struct PlainMemo: PersistentModel {
        static let entityName = "Memo"
        var id: String
        var title: String
        var year: Int
    }

    /// Titles of every length that matters: short, around the cut of a one-field index (253
    /// bytes of payload) and of a two-field one (125), with multi-byte scalars across the cut,
    /// 500, 510, 4,000 and 100,000 bytes, and long ones that share a long prefix and differ after it.
    static let titles: [String] = {
        var titles = ["", "a", "Emma", "Émile", "zebra"]
        for length in [124, 125, 126, 252, 253, 254, 500, 505, 510, 4_000, 100_000] {
            titles.append(String(repeating: "t", count: length))
        }
        for cut in [125, 253] {
            for scalar in ["é", "€", "𝄞"] {
                for shift in 0..<4 {
                    titles.append(String(repeating: "m", count: cut - shift) + scalar + "tail")
                }
            }
        }
        let shared = String(repeating: "k", count: 600)
        for tail in ["", "a", "b", "é", "𝄞", "aa", "ab", String(repeating: "z", count: 3_000)] {
            titles.append(shared + tail)
        }
        titles.append(String(repeating: "é", count: 300))
        titles.append(String(repeating: "é", count: 300) + "x")
        return titles
    }()

    /// String identifiers: short ones, and 510-byte ones (the longest allowed) that share their
    /// first 500 bytes, in ASCII and in two-byte scalars.
    static func identifier(_ number: Int) -> String {
        let digits = String(number + 1_000_000_000)
        switch number % 4 {
        case 0: return String(repeating: "i", count: 500) + digits
        case 1: return String(repeating: "é", count: 250) + digits
        default: return "memo-\(number)"
        }
    }

    /// Random saves of memos with the titles above: inserts, title changes and deletions.
    func fill(_ container: ModelContainer, using random: inout SeededGenerator) throws -> [String: Memo] {
        let context = container.mainContext
        var stored: [String: Memo] = [:]
        for round in 0..<6 {
            for _ in 0..<40 {
                let number = Int.random(in: 0..<120, using: &random)
                let id = Self.identifier(number)
                if round > 2, Int.random(in: 0..<5, using: &random) == 0 {
                    context.delete(Memo(id: id, title: "", year: 0))
                    stored[id] = nil
                } else {
                    let memo = Memo(
                        id: id, title: Self.titles.randomElement(using: &random)!,
                        year: Int.random(in: 0..<4, using: &random))
                    context.insert(memo)
                    stored[id] = memo
                }
            }
            try context.save()
        }
        return stored
    }

    func checkIndexes(_ store: Store) throws {
        let audit = try StoreAudit(directory: url.path)
        #expect(audit.indexesMatchProjection, "\(audit.indexesMatch)")
        let report = try store.check()
        #expect(report.isHealthy, "\(report.problems)")
    }

    /// Typed fetches and counts against filtering every model in Swift.
    func checkFetches(
        _ container: ModelContainer, _ stored: [String: Memo], using random: inout SeededGenerator
    )
        throws
    {
        let context = ModelContext(container)
        let all = Array(stored.values)
        func expect(_ descriptor: FetchDescriptor<Memo>, _ matches: (Memo) -> Bool, _ text: String) throws {
            // The fetch's order: the sort, then the identifier key (a string's UTF-8).
            let expected = all.filter(matches).sorted {
                $0.year != $1.year ? $0.year < $1.year : $0.id.utf8.lexicographicallyPrecedes($1.id.utf8)
            }
            let fetched = try context.fetch(descriptor)
            #expect(
                fetched.map { $0.id.hashValue } == expected.map { $0.id.hashValue },
                "\(text): \(fetched.count) fetched, \(expected.count) expected, seed \(random.seed)")
            #expect(try context.fetchCount(descriptor) == expected.count, "count of \(text), seed \(random.seed)")
        }
        // Every title, a title that shares a long prefix with stored ones but is not stored, and
        // the decomposed spelling of stored ones (Swift calls it equal).
        var probes = Self.titles
        probes.append(String(repeating: "k", count: 600) + "c")
        probes.append(String(repeating: "t", count: 300))
        probes.append(String(repeating: "e\u{301}", count: 300))
        for title in probes {
            try expect(
                FetchDescriptor(predicate: #Predicate { $0.title == title }, sortBy: [SortDescriptor(\.year)]),
                { $0.title == title }, "title == \(title.prefix(20))… (\(title.utf8.count) bytes)")
            let year = Int.random(in: 0..<4, using: &random)
            try expect(
                FetchDescriptor(
                    predicate: #Predicate { $0.title == title && $0.year == year }, sortBy: [SortDescriptor(\.year)]),
                { $0.title == title && $0.year == year }, "title == \(title.prefix(20))… && year == \(year)")
        }
        for _ in 0..<20 {
            let list = (0..<3).map { _ in probes.randomElement(using: &random)! }
            try expect(
                FetchDescriptor(predicate: #Predicate { list.contains($0.title) }, sortBy: [SortDescriptor(\.year)]),
                { list.contains($0.title) }, "title in a list")
        }
        // A condition the index answers alone, over entries listing long identifiers.
        for year in 0..<4 {
            try expect(
                FetchDescriptor(predicate: #Predicate { $0.year == year }, sortBy: [SortDescriptor(\.year)]),
                { $0.year == year }, "year == \(year)")
        }
    }

    /// Text queries through the indexes (ranges, sorts served by an index's order, windows)
    /// against the same queries run over a scan.
    func checkTextQueries(_ store: Store, using random: inout SeededGenerator) throws {
        var texts = [
            "Memo sort by title limit 40", "Memo sort by title limit 25 offset 30", "Memo sort by title, year limit 60",
            "Memo sort by title, year limit 15 offset 50", "Memo sort by year limit 30",
            // Backwards, long titles cut in their keys and tied on their prefixes.
            "Memo sort by title desc limit 40", "Memo sort by title desc limit 25 offset 30",
            "Memo sort by title desc, year desc limit 60", "Memo sort by title desc, year desc limit 15 offset 50",
            "Memo sort by year desc limit 30",
        ]
        for _ in 0..<12 {
            let title = Self.titles.randomElement(using: &random)!
            texts.append("Memo where title == \"\(title)\"")
            texts.append("Memo where title == \"\(title)\" sort by title, year limit 8")
            texts.append("Memo where title == \"\(title)\" and year >= 1 sort by title, year")
            texts.append("Memo where title == \"\(title)\" sort by year desc limit 8")
            texts.append("Memo where title == \"\(title)\" and year >= 1 sort by title desc, year desc")
        }
        for text in texts {
            let query = try QueryParser.parse(text)
            let indexed = try store.run(query)
            let scanned = try store.run(query, forceScan: true)
            // Keys are compared by a digest: a long identifier's bytes would flood the report.
            #expect(
                indexed.map { $0.key.hashValue } == scanned.map { $0.key.hashValue },
                "\(text.prefix(60))… (\(text.utf8.count) bytes): \(indexed.count) rows from the index, \(scanned.count) from a scan, seed \(random.seed)"
            )
        }
        #expect(try store.explain(QueryParser.parse("Memo sort by title limit 40")).contains("in the index's order"))
    }

    @Test func longValuesAndLongIdentifiersAreIndexedAndQueriedExactly() throws {
        var random = SeededGenerator(label: "long index values")
        let container = try ModelContainer(for: Memo.self, configurations: ModelConfiguration(url: url))
        let stored = try fill(container, using: &random)
        try checkIndexes(container.store)
        try checkFetches(container, stored, using: &random)
        try checkTextQueries(container.store, using: &random)
    }

    @Test func aLongestStringIdentifierIsSavedUnderAnIndex() throws {
        let container = try ModelContainer(for: Memo.self, configurations: ModelConfiguration(url: url))
        let context = container.mainContext
        let ids = [String(repeating: "x", count: 510), String(repeating: "x", count: 509) + "y"]
        for id in ids { context.insert(Memo(id: id, title: String(repeating: "t", count: 4_000), year: 1)) }
        try context.save()
        context.insert(Memo(id: ids[0], title: "short", year: 2))
        try context.save()
        let short = try context.fetch(FetchDescriptor<Memo>(predicate: #Predicate { $0.title == "short" }))
        #expect(short.map(\.id) == [ids[0]])
        #expect(try context.fetchCount(FetchDescriptor<Memo>(predicate: #Predicate { $0.year == 1 })) == 1)
        context.delete(Memo(id: ids[1], title: "", year: 0))
        try context.save()
        #expect(try context.fetchCount(FetchDescriptor<Memo>(predicate: #Predicate { $0.year == 1 })) == 0)
        try checkIndexes(container.store)
    }

    @Test func anIndexIsAddedOverExistingLongValues() throws {
        var random = SeededGenerator(label: "index over long values")
        var stored: [String: Memo] = [:]
        do {
            let plain = try ModelContainer(for: PlainMemo.self, configurations: ModelConfiguration(url: url))
            for number in 0..<120 {
                let memo = Memo(
                    id: Self.identifier(number), title: Self.titles.randomElement(using: &random)!,
                    year: Int.random(in: 0..<4, using: &random))
                plain.mainContext.insert(PlainMemo(id: memo.id, title: memo.title, year: memo.year))
                stored[memo.id] = memo
            }
            try plain.mainContext.save()
        }
        let container = try ModelContainer(for: Memo.self, configurations: ModelConfiguration(url: url))
        #expect(try container.store.entity(named: "Memo")?.indexes.count == 3)
        try checkIndexes(container.store)
        try checkFetches(container, stored, using: &random)
        try checkTextQueries(container.store, using: &random)
    }

    @Test func aLiveQueryFollowsRecordsWithLongValues() throws {
        let container = try ModelContainer(for: Memo.self, configurations: ModelConfiguration(url: url))
        let context = ModelContext(container)
        let shared = String(repeating: "k", count: 600)
        let title = shared + "a"
        var descriptor = FetchDescriptor<Memo>(
            predicate: #Predicate { $0.title == title }, sortBy: [SortDescriptor(\.year)])
        descriptor.fetchLimit = 4
        let query = try LiveQuery(descriptor, in: container)
        #expect(query.isEmpty)
        for number in 0..<12 {
            context.insert(
                Memo(id: Self.identifier(number), title: number % 2 == 0 ? title : shared + "b", year: 11 - number))
        }
        try context.save()
        try query.catchUp()
        #expect(Array(query) == (try context.fetch(descriptor)))
        #expect(query.map(\.year) == [1, 3, 5, 7])
        // A match leaves for a title that differs only past the cut, another comes in.
        context.insert(Memo(id: Self.identifier(10), title: shared + "b", year: 1))
        context.insert(Memo(id: Self.identifier(11), title: title, year: 0))
        try context.save()
        try query.catchUp()
        #expect(Array(query) == (try context.fetch(descriptor)))
        #expect(query.map(\.year) == [0, 3, 5, 7])
    }

    /// The command line as a user runs it: an import whose description indexes long titles of
    /// records with 510-byte identifiers, then inserts, queries and a check.
    @Test func theCommandLineImportsInsertsAndQueriesLongValues() throws {
        let path = directory.path("cli")
        let shared = String(repeating: "k", count: 600)
        let description =
            #"{"entity":"Memo","identifier":"String","indexes":["title","title,year"],"fields":{"id":"string","title":"string","year":"int"}}"#
        func line(_ number: Int, _ title: String) -> String {
            #"{"op":"insert","entity":"Memo","record":{"id":"\#(Self.identifier(number))","title":"\#(title)","year":\#(number % 3)}}"#
        }
        let lines = [description] + (0..<40).map { line($0, shared + ($0 % 2 == 0 ? "a" : "b")) }
        let imported = try runBuilt("rill", ["import", path], input: lines.joined(separator: "\n"))
        #expect(imported.status == 0, "\(imported.error)")
        let record =
            #"{"id":"\#(String(repeating: "x", count: 510))","title":"\#(String(repeating: "t", count: 4_000))","year":1}"#
        let inserted = try runBuilt("rill", ["insert", path, "Memo", record])
        #expect(inserted.status == 0, "\(inserted.error)")
        for (query, count) in [
            ("Memo where title == \"\(shared)a\"", 20), ("Memo where title == \"\(shared)a\" and year == 1", 6),
            ("Memo where title == \"\(shared)\"", 0),
            ("Memo where title == \"\(String(repeating: "t", count: 4_000))\"", 1),
        ] {
            let run = try runBuilt("rill", ["query", "--json", path, query])
            #expect(run.status == 0, "\(run.error)")
            #expect(run.output.split(separator: "\n").count == count, "\(query.prefix(40))…")
        }
        let sorted = try runBuilt("rill", ["query", "--json", path, "Memo sort by title, year limit 5"])
        let years = sorted.output.split(separator: "\n").map {
            $0.contains(#""year":0"#) ? 0 : $0.contains(#""year":1"#) ? 1 : 2
        }
        #expect(years == [0, 0, 0, 0, 0], "\(sorted.output.prefix(200))")
        let check = try runBuilt("rill", ["check", path])
        #expect(check.status == 0, "\(check.output)\(check.error)")
    }

    @Test func dataAndURLIndexesTakeLongValuesAndServeSorts() throws {
        var random = SeededGenerator(label: "long data and URLs")
        let store = try Store(directory: url.path, options: .init(), create: true)
        let entity = try store.registerEntity(
            named: "Blob", identifierKind: .integer, indexes: [[["bytes"]], [["link"]], [["link"], ["bytes"]]])
        let sharedBytes = [UInt8](repeating: 7, count: 251) + [0]
        let sharedPath = "https://example.com/" + String(repeating: "p", count: 240)
        var changes: [PreparedChange] = []
        for number in 0..<150 {
            var bytes = Int.random(in: 0..<4, using: &random) == 0 ? [] : sharedBytes
            for _ in 0..<Int.random(in: 0...6, using: &random) {
                bytes.append([0, 1, 7, 0xFF].randomElement(using: &random)!)
            }
            if Int.random(in: 0..<10, using: &random) == 0 { bytes += [UInt8](repeating: 9, count: 5_000) }
            var link = Int.random(in: 0..<4, using: &random) == 0 ? "https://example.com/" : sharedPath
            for _ in 0..<Int.random(in: 0...6, using: &random) {
                link += ["a", "b", "%C3%A9", "/"].randomElement(using: &random)!
            }
            let record = RecordValue.map([
                RecordField(name: "id", value: .int(Int64(number))),
                RecordField(name: "bytes", value: .data(Data(bytes))),
                RecordField(name: "link", value: .url(link)),
            ])
            changes.append(
                PreparedChange(entity: entity, key: number.storageKey, operation: .upsert(record.recordBytes())))
        }
        _ = try store.commit(changes, author: nil)
        try checkIndexes(store)
        for text in [
            "Blob sort by bytes limit 40", "Blob sort by bytes limit 20 offset 60", "Blob sort by link limit 40",
            "Blob sort by link, bytes limit 50", "Blob sort by link, bytes limit 30 offset 70",
            "Blob sort by bytes desc limit 40", "Blob sort by bytes desc limit 20 offset 60",
            "Blob sort by link desc limit 40", "Blob sort by link desc, bytes desc limit 50",
            "Blob sort by link desc, bytes desc limit 30 offset 70",
        ] {
            let query = try QueryParser.parse(text)
            let order = text.contains("desc") ? "in the index's reverse order" : "in the index's order"
            #expect(try store.explain(query).contains(order), "\(text)")
            #expect(
                try store.run(query).map(\.key) == store.run(query, forceScan: true).map(\.key),
                "\(text), seed \(random.seed)")
        }
        // The same records where only the compound index serves a sort by its first field: ties on
        // the link (cut ones among them) are put in identifier order as the walk reads them.
        let clips = try store.registerEntity(named: "Clip", identifierKind: .integer, indexes: [[["link"], ["bytes"]]])
        _ = try store.commit(
            changes.map { PreparedChange(entity: clips, key: $0.key, operation: $0.operation) }, author: nil)
        for text in [
            "Clip sort by link limit 60", "Clip sort by link desc limit 60",
            "Clip sort by link desc offset 40 limit 90",
        ] {
            let query = try QueryParser.parse(text)
            #expect(try store.explain(query).contains("ties on (link) in identifier order"), "\(text)")
            #expect(
                try store.run(query).map(\.key) == store.run(query, forceScan: true).map(\.key),
                "\(text), seed \(random.seed)")
        }
    }

    /// A store as format 1 wrote it: memos titled `titles`, whole values in their index keys.
    static func makeFormatOneStore(at url: URL, titles: [String]) throws {
        let container = try ModelContainer(for: Memo.self, configurations: ModelConfiguration(url: url))
        for (number, title) in titles.enumerated() {
            container.mainContext.insert(Memo(id: "m\(number)", title: title, year: number))
        }
        try container.mainContext.save()
        let store = container.store
        let entity = try #require(try store.entity(named: "Memo"))
        try store.withWriteTransaction { txn in
            for index in entity.indexes {
                try txn.removeAll(from: index.database)
                for (number, title) in titles.enumerated() {
                    let record = RecordValue.map([
                        RecordField(name: "title", value: .string(title)),
                        RecordField(name: "year", value: .int(Int64(number))),
                    ])
                    var key: [UInt8] = []
                    for path in index.fieldPaths {
                        try IndexKey.append(QueryEvaluator.read(path, from: record), to: &key)
                    }
                    key += "m\(number)".storageKey
                    try txn.put([], for: key, in: index.database)
                }
            }
            try txn.put([0, 0, 0, 1], for: Array("format".utf8), in: store.meta)
        }
    }

    @Test func aFormatOneStoreIsRaisedToTheCurrentFormat() throws {
        // Values as long as a format-1 key could hold them.
        let titles = ["short", String(repeating: "w", count: 300), String(repeating: "v", count: 480), "other"]
        try Self.makeFormatOneStore(at: url, titles: titles)
        let container = try ModelContainer(for: Memo.self, configurations: ModelConfiguration(url: url))
        let format = try container.store.withReadTransaction { txn in
            try txn.get(Array("format".utf8), in: container.store.meta).map(Array.init)
        }
        #expect(format == [0, 0, 0, 4])
        try checkIndexes(container.store)
        let context = container.mainContext
        for title in titles {
            #expect(
                try context.fetch(FetchDescriptor<Memo>(predicate: #Predicate { $0.title == title })).map(\.title) == [
                    title
                ])
            #expect(try context.fetchCount(FetchDescriptor<Memo>(predicate: #Predicate { $0.title == title })) == 1)
        }
    }

    /// A format-1 store this process may not write (run as the user nobody) is read as it is when
    /// no index holds a value format 2 cuts, and is refused, naming the index, when one does.
    @Test func aFormatOneStoreThatCannotBeWritten() throws {
        for (name, titles) in [("short", ["a", "b", "c"]), ("long", ["a", String(repeating: "w", count: 300)])] {
            let store = directory.url.appendingPathComponent(name)
            try Self.makeFormatOneStore(at: store, titles: titles)
            chmod(directory.url.path, 0o755)
            chmod(store.path, 0o755)
            chmod(store.path + "/data.mdb", 0o644)
            chmod(store.path + "/lock.mdb", 0o666)
            guard FileManager.default.isExecutableFile(atPath: "/usr/bin/setpriv") else {
                try Test.cancel("needs setpriv to run as nobody")
            }
            let process = Process()
            process.executableURL = URL(fileURLWithPath: "/usr/bin/setpriv")
            process.arguments = [
                "--reuid=65534", "--regid=65534", "--clear-groups", buildProductsDirectory.path + "/rill", "query",
                store.path, "Memo where title == \"a\"",
            ]
            let pipe = Pipe()
            process.standardOutput = pipe
            process.standardError = pipe
            try process.run()
            let output = String(decoding: pipe.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
            process.waitUntilExit()
            if name == "short" {
                #expect(process.terminationStatus == 0, "\(output)")
                #expect(output.contains("m0"), "\(output)")
            } else {
                #expect(process.terminationStatus == 1, "\(output)")
                #expect(output.contains("Memo(title) of \(store.path)") && output.contains("write"), "\(output)")
            }
        }
    }

    @Test func aFormatOneStoreOfShortValuesIsRaisedWithItsIndexes() throws {
        do {
            let container = try ModelContainer(for: Memo.self, configurations: ModelConfiguration(url: url))
            for number in 0..<50 {
                container.mainContext.insert(Memo(id: "m\(number)", title: "t\(number % 7)", year: number % 3))
            }
            try container.mainContext.save()
            try container.store.withWriteTransaction { txn in
                try txn.put([0, 0, 0, 1], for: Array("format".utf8), in: container.store.meta)
            }
        }
        let container = try ModelContainer(for: Memo.self, configurations: ModelConfiguration(url: url))
        let format = try container.store.withReadTransaction { txn in
            try txn.get(Array("format".utf8), in: container.store.meta).map(Array.init)
        }
        #expect(format == [0, 0, 0, 4])
        try checkIndexes(container.store)
        #expect(
            try container.mainContext.fetchCount(FetchDescriptor<Memo>(predicate: #Predicate { $0.title == "t3" })) == 7
        )
    }
}
