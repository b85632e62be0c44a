import Foundation
import RillTestSupport
import RillWorkloads
import Testing

@testable import Rill

@Suite struct IndexTests {
    let directory = TemporaryDirectory()

    var url: URL { directory.url.appendingPathComponent("store") }

    /// The same entity as `Gadget`, without indexes: a store written before indexes were declared.
    struct PlainGadget: PersistentModel {
        static let entityName = "Gadget"
        var id: Int
        var stock: Int
        var maker: String?
    }

    @Test func indexesFollowRandomSaves() throws {
        var random = SeededGenerator(label: "index maintenance")
        let container = try ModelContainer(for: Gadget.self, configurations: ModelConfiguration(url: url))
        let context = container.mainContext
        var stored: [Int: Gadget] = [:]
        for _ in 0..<80 {
            for _ in 0..<Int.random(in: 1...12, using: &random) {
                let id = Int.random(in: 0..<150, using: &random)
                if Int.random(in: 0..<4, using: &random) == 0 {
                    context.delete(Gadget.random(id: id, using: &random))
                    stored[id] = nil
                } else if var gadget = stored[id], Bool.random(using: &random) {
                    // Change one indexed field, or an unindexed one.
                    switch Int.random(in: 0..<4, using: &random) {
                    case 0: gadget.stock += 1
                    case 1: gadget.maker = gadget.maker == nil ? "Acme" : nil
                    case 2: gadget.spec.weight = Int.random(in: 0...1000, using: &random)
                    default: gadget.name += "!"
                    }
                    context.insert(gadget)
                    stored[id] = gadget
                } else {
                    let gadget = Gadget.random(id: id, using: &random)
                    context.insert(gadget)
                    stored[id] = gadget
                }
            }
            try context.save()
        }
        let audit = try StoreAudit(directory: url.path)
        #expect(audit.indexesMatch.count == Gadget.indexes.count)
        #expect(audit.indexesMatchProjection, "\(audit.indexesMatch)")
        #expect(audit.projectionsMatchReplay)
    }

    @Test func declaringAnIndexBuildsItFromStoredRecords() throws {
        do {
            let plain = try ModelContainer(for: PlainGadget.self, configurations: ModelConfiguration(url: url))
            // Stored with the full Gadget shape, so the Gadget type can read them back.
            var random = SeededGenerator(seed: 7)
            let context = ModelContext(plain)
            for id in 0..<500 {
                let gadget = Gadget.random(id: id, using: &random)
                context.insert(PlainGadget(id: gadget.id, stock: gadget.stock, maker: gadget.maker))
            }
            try context.save()
            #expect(try plain.store.entity(named: "Gadget")?.indexes.isEmpty == true)
        }
        let store = try Store(directory: url.path, options: .init(), create: false)
        _ = try store.registerEntity(
            named: "Gadget", identifierKind: .integer, indexes: [[["stock"]], [["maker"], ["stock"]]])
        let audit = try StoreAudit(directory: url.path)
        #expect(audit.indexesMatch.count == 2)
        #expect(audit.indexesMatchProjection)
        let query = try QueryParser.parse("Gadget where stock == 10")
        #expect(try store.explain(query).contains("index Gadget(stock)"))
        let expected = try store.run(QueryParser.parse("Gadget")).filter {
            QueryEvaluator.read(["stock"], from: $0.record) == .int(10)
        }
        #expect(try store.run(query).map(\.key) == expected.map(\.key))
    }

    @Test func aSaveAfterAnotherContainerAddedAnIndexMaintainsIt() throws {
        let plain = try ModelContainer(for: PlainGadget.self, configurations: ModelConfiguration(url: url))
        plain.mainContext.insert(PlainGadget(id: 1, stock: 5, maker: "Acme"))
        try plain.mainContext.save()
        // Another store handle (as another process would) adds an index.
        let other = try Store(directory: url.path, options: .init(), create: false)
        _ = try other.registerEntity(named: "Gadget", identifierKind: .integer, indexes: [[["stock"]]])
        // The first container's cached catalog is stale; its next save must still keep the index.
        plain.mainContext.insert(PlainGadget(id: 2, stock: 6, maker: nil))
        plain.mainContext.insert(PlainGadget(id: 1, stock: 9, maker: "Acme"))
        try plain.mainContext.save()
        let audit = try StoreAudit(directory: url.path)
        #expect(audit.indexesMatch == ["Gadget(stock)": true])
    }

    @Test func explainNamesTheIndexAndTheScan() throws {
        let container = try ModelContainer(for: Gadget.self, configurations: ModelConfiguration(url: url))
        var random = SeededGenerator(seed: 11)
        for id in 0..<100 { container.mainContext.insert(Gadget.random(id: id, using: &random)) }
        try container.mainContext.save()
        let store = container.store
        func explain(_ text: String) throws -> String { try store.explain(QueryParser.parse(text)) }
        #expect(try explain("Gadget where stock > 10 and stock <= 20").contains("index Gadget(stock): 1 key range"))
        #expect(try explain("Gadget where maker == \"Acme\" and stock > 3").contains("index Gadget(maker,stock)"))
        #expect(try explain("Gadget where stock in [1, 2, 3]").contains("3 key ranges"))
        #expect(try explain("Gadget sort by price limit 5").contains("in the index's order"))
        #expect(try explain("Gadget where name contains \"a\"").contains("scan"))
        #expect(try explain("Gadget where stock > 3 or price < 2").hasPrefix("union of 2 index scans"))
        #expect(try explain("Gadget where stock > 3 or name contains \"a\"").hasPrefix("scan"))
    }

    @Test func aSortServedByIndexOrderBreaksTiesByIdentifier() throws {
        // Gadget(maker, stock) orders equal makers by stock: it must not serve a sort by maker
        // alone, whose ties go by identifier.
        let container = try ModelContainer(for: Gadget.self, configurations: ModelConfiguration(url: url))
        var random = SeededGenerator(seed: 5)
        for id in 0..<60 {
            var gadget = Gadget.random(id: id, using: &random)
            gadget.maker = id % 3 == 0 ? nil : "Acme"
            gadget.stock = 100 - id
            container.mainContext.insert(gadget)
        }
        try container.mainContext.save()
        let store = container.store
        for text in ["Gadget sort by maker limit 25", "Gadget where maker == \"Acme\" sort by maker limit 25"] {
            let query = try QueryParser.parse(text)
            #expect(try store.run(query).map(\.key) == store.run(query, forceScan: true).map(\.key), "\(text)")
        }
        let descriptor = FetchDescriptor<Gadget>(sortBy: [SortDescriptor(\.maker)])
        var limited = descriptor
        limited.fetchLimit = 25
        #expect(
            try container.mainContext.fetch(limited).map(\.id)
                == Array(container.mainContext.fetch(descriptor).map(\.id).prefix(25)))
        #expect(
            try store.explain(QueryParser.parse("Gadget sort by maker, stock limit 5")).contains("in the index's order")
        )
    }

    @Test func fetchCountOfAnIndexedConditionReadsOnlyTheIndex() throws {
        let container = try ModelContainer(for: Gadget.self, configurations: ModelConfiguration(url: url))
        // A record that the index can key but that does not decode as a Gadget (fields are missing).
        let partial = RecordValue.map([
            RecordField(name: "id", value: .int(1)), RecordField(name: "stock", value: .int(5)),
        ])
        let entity = try #require(try container.store.entity(named: "Gadget"))
        _ = try container.store.commit(
            [PreparedChange(entity: entity, key: 1.storageKey, operation: .upsert(partial.recordBytes()))], author: nil)
        let context = ModelContext(container)
        let descriptor = FetchDescriptor<Gadget>(predicate: #Predicate { $0.stock == 5 })
        #expect(try context.fetchCount(descriptor) == 1)
        let error = #expect(throws: RillError.self) { try context.fetch(descriptor) }
        #expect(error?.code == .decodingFailed)
    }

    @Test func noOrderingComparisonMatchesNaNThroughAnIndex() throws {
        let container = try ModelContainer(for: Gadget.self, configurations: ModelConfiguration(url: url))
        let context = container.mainContext
        let prices = [Double.nan, .infinity, -.infinity, -0.0, .greatestFiniteMagnitude, 3, 500]
        for (id, price) in prices.enumerated() {
            context.insert(
                Gadget(
                    id: id, name: "", maker: nil, price: price, stock: 0, rating: nil, tags: [], released: Date(),
                    active: true, spec: .init(weight: 0, color: "")))
        }
        try context.save()
        let x = 256.77
        let big = 1e300
        let greater = #Predicate<Gadget> { $0.price > x }
        let atLeast = #Predicate<Gadget> { $0.price >= x }
        let less = #Predicate<Gadget> { $0.price < x }
        let between = #Predicate<Gadget> { $0.price >= 3 && $0.price <= big }
        let cases: [(String, Predicate<Gadget>, (Double) -> Bool)] = [
            ("price > 256.77", greater, { $0 > x }),
            ("price >= 256.77", atLeast, { $0 >= x }),
            ("price < 256.77", less, { $0 < x }),
            ("price between 3 and 1e300", between, { $0 >= 3 && $0 <= big }),
        ]
        for (text, predicate, check) in cases {
            let expected = prices.indices.filter { check(prices[$0]) }
            let query = try QueryParser.parse("Gadget where \(text)")
            #expect(try container.store.explain(query).hasPrefix("index"), "\(text) is served by the index")
            let rows = try container.store.run(query).map { row in row.key.withUnsafeBytes { Int(storageKey: $0)! } }
            #expect(rows.sorted() == expected, "\(text)")
            let descriptor = FetchDescriptor<Gadget>(predicate: predicate)
            let fetched = try context.fetch(descriptor).map(\.id)
            #expect(fetched.sorted() == expected, "#Predicate \(text)")
            #expect(try context.fetchCount(descriptor) == expected.count, "count \(text)")
        }
    }
}
