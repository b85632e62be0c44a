import Foundation
import RillLocks
import RillTestSupport
import RillWorkloads
import Testing

@testable import Rill

extension PredicateBook: PersistentModel {}

/// No predicate and no stored value can crash the process: where Swift's evaluation of a
/// `#Predicate` traps (integer overflow, division by zero, `-Int.min`, a reversed closed range),
/// fetches and live queries answer with the total semantics of Rill's query evaluator, on every
/// path, and agree with Swift everywhere else.
@Suite struct TotalEvaluationTests {
    typealias Book = PredicateBook
    let directory = TemporaryDirectory()

    // MARK: - The example

    @Test func anOverflowingProductIsComparedAsItsExactValue() throws {
        let container = try ModelContainer(
            for: RillWorkloads.Book.self, configurations: ModelConfiguration(url: directory.url.appending(path: "s")))
        let context = container.mainContext
        let big = RillWorkloads.Book(title: "Big", author: "A", pages: 100_000_000)
        let small = RillWorkloads.Book(title: "Small", author: "B", pages: 0)
        context.insert(big)
        context.insert(small)
        try context.save()
        let k = 1_000_000_000_000
        let zero = 0
        typealias Model = RillWorkloads.Book
        func titles(_ predicate: Predicate<Model>) throws -> [String] {
            try context.fetch(FetchDescriptor(predicate: predicate, sortBy: [SortDescriptor(\.title)])).map(\.title)
        }
        // 10^20 overflows Int; compared as its value, it is greater than 5.
        #expect(try titles(#Predicate { $0.pages * k > 5 }) == ["Big"])
        #expect(try titles(#Predicate { !($0.pages * k < 5) }) == ["Big"])
        #expect(try titles(#Predicate { $0.pages * k == 100_000_000 * 1_000 }) == [])
        // Division by zero is null: no comparison with it holds, its negation does.
        #expect(try titles(#Predicate { $0.pages / zero > -1 }) == [])
        #expect(try titles(#Predicate { !($0.pages / zero > -1) }) == ["Big", "Small"])
        #expect(try titles(#Predicate { $0.pages % zero == 0 }) == [])
        // The same through the text query language.
        let text = try container.store.run(QueryParser.parse("Book where pages * 1000000000000 > 5"))
        #expect(text.count == 1)

        // A live query and a context with an unsaved model decide alike.
        let live = try LiveQuery(FetchDescriptor<Model>(predicate: #Predicate { $0.pages * k > 5 }), in: container)
        #expect(live.map(\.title) == ["Big"])
        let other = ModelContext(container)
        other.insert(RillWorkloads.Book(title: "Unsaved", author: "C", pages: Int.max))
        #expect(
            try other.fetch(
                FetchDescriptor<Model>(predicate: #Predicate { $0.pages * k > 5 }, sortBy: [SortDescriptor(\.title)])
            ).map(\.title) == ["Big", "Unsaved"])
        context.insert(RillWorkloads.Book(title: "Huge", author: "D", pages: Int.min))
        try context.save()
        try live.catchUp()
        #expect(live.map(\.title).sorted() == ["Big"])
        #expect(try titles(#Predicate { $0.pages * k < 5 }) == ["Huge", "Small"])
    }

    @Test func aRecordWrittenByAnotherProcessCannotCrashAFetch() throws {
        let path = directory.path("cli")
        let container = try ModelContainer(
            for: RillWorkloads.Book.self, configurations: ModelConfiguration(url: URL(fileURLWithPath: path)))
        let context = container.mainContext
        context.insert(RillWorkloads.Book(title: "Seed", author: "A", pages: 1))
        try context.save()
        let k = 1_000_000_000_000
        let descriptor = FetchDescriptor<RillWorkloads.Book>(predicate: #Predicate { $0.pages * k > 5 })
        #expect(try context.fetch(descriptor).map(\.title) == ["Seed"])
        let live = try LiveQuery(descriptor, in: container)
        let id = UUID()
        let run = try runBuilt(
            "rill",
            [
                "insert", path, "Book",
                #"{"id":"\#(id)","title":"Wide","author":"B","pages":100000000,"isRead":false,"addedAt":"2023-11-14T22:13:20Z"}"#,
            ])
        #expect(run.status == 0, "\(run.error)")
        #expect(try context.fetch(descriptor).map(\.title).sorted() == ["Seed", "Wide"])
        try live.catchUp()
        #expect(live.map(\.title).sorted() == ["Seed", "Wide"])
    }

    // MARK: - Every shape, extreme values

    /// Predicates whose untranslatable parts can trap in Swift: decided by Rill's own walk of the
    /// expression tree.
    static func trappingShapes() -> [(String, Predicate<Book>)] {
        let k = Int.max
        let small = Int.min
        let zero = 0
        return [
            ("filter grams * k", #Predicate { !$0.ingredients.filter { $0.grams * k > 0 }.isEmpty }),
            ("first && pages + k", #Predicate { $0.tags.first == "x" || $0.pages + k > 0 }),
            ("computed || -pages", #Predicate { $0.displayTitle == "CAFE" || -$0.pages > 0 }),
            ("computed || pages / zero", #Predicate { $0.displayTitle == "X" || !($0.pages / zero < 1) }),
            ("max && pages - small", #Predicate { $0.tags.max() == "x" || $0.pages - small < 0 }),
            ("computed range", #Predicate { $0.displayTitle != "" && ($0.pages...($0.pages + 10)).contains(k) }),
            ("reversed range", #Predicate { $0.displayTitle != "" && ($0.pages...0).contains(-1) }),
            ("copies filter", #Predicate { book in book.tags.filter { _ in book.copies - 1 > 2 }.count > 0 }),
            ("zip flatMap", #Predicate { $0.displayTitle != "" && $0.place.zip.flatMap { $0 * 2 > 0 } == true }),
            ("ternary", #Predicate { $0.displayTitle != "" && ($0.isRead ? $0.pages * 3 : -$0.pages) > 0 }),
            ("contains product", #Predicate { $0.displayTitle != "" && [0, 2].contains($0.pages * 2) }),
            ("first tag", #Predicate { $0.tags[0] == "x" }),
            ("tags slice", #Predicate { $0.tags[0..<2].isEmpty }),
            ("grams!", #Predicate { $0.displayTitle != "" && $0.place.zip! > 0 }),
        ]
    }

    private static func extreme(_ index: Int, _ random: inout SeededGenerator) -> Book {
        func pick<T>(_ values: [T]) -> T { values.randomElement(using: &random)! }
        let vocabulary = ["", "x", "X", "Café", "cafe\u{301}", "CAFE", "salt", "Paris", "a", "M", "hot"]
        func words(_ max: Int) -> [String] {
            (0..<Int.random(in: 0...max, using: &random)).map { _ in pick(vocabulary) }
        }
        let ints = [Int.min, Int.min + 1, -1, 0, 1, 120, 300, 301, Int.max - 1, Int.max]
        let doubles = [
            Double.nan, .infinity, -.infinity, -0.0, 0, .greatestFiniteMagnitude, -.greatestFiniteMagnitude,
            .leastNonzeroMagnitude, 9.5, 2.5, 20,
        ]
        let dates = [
            Date.distantPast, .distantFuture, Date(timeIntervalSince1970: 0), PredicateOracleTests.now,
            PredicateOracleTests.now.addingTimeInterval(-3 * 86_400),
        ]
        var ingredients: [PredicateIngredient] = []
        for _ in 0..<Int.random(in: 0...2, using: &random) {
            ingredients.append(PredicateIngredient(name: pick(vocabulary), grams: pick(ints), labels: words(2)))
        }
        var bytes = (UInt64(index) + 1).bigEndian
        let id = withUnsafeBytes(of: &bytes) { raw in
            UUID(uuid: (0, 0, 0, 0, 0, 0, 0, 0, raw[0], raw[1], raw[2], raw[3], raw[4], raw[5], raw[6], raw[7]))
        }
        return Book(
            title: pick(vocabulary), content: pick(vocabulary) + " " + pick(vocabulary),
            subtitle: pick([nil, "", "a", "Zoë"]),
            pages: pick(ints), copies: pick([0, 1, 3, 4, UInt.max - 1, UInt.max]), price: pick(doubles),
            rating: pick([nil, .nan, .infinity, -.infinity, 0, 3, 4.5]), isRead: Bool.random(using: &random),
            addedAt: pick(dates), plannedDate: pick([nil] + dates), id: id, genre: pick(PredicateGenre.allCases),
            place: PredicatePlace(city: pick(vocabulary), zip: pick([nil, Int.min, Int.max, 0, 50_001])),
            ingredients: ingredients, tags: words(3))
    }

    @Test func everyOracleShapeWithExtremeValues() throws {
        var random = SeededGenerator(label: "extreme values")
        let container = try ModelContainer(
            for: Book.self, configurations: ModelConfiguration(url: directory.url.appending(path: "extremes")))
        let context = container.mainContext
        var books: [UUID: Book] = [:]
        for index in 0..<300 {
            let book = Self.extreme(index, &random)
            books[book.id] = book
            context.insert(book)
        }
        try context.save()
        let shapes = PredicateOracleTests.predicates() + Self.trappingShapes()
        var failures: [String] = []
        var live: [(String, Predicate<Book>, LiveQuery<Book>)] = []

        func check(_ name: String, _ predicate: Predicate<Book>, _ query: LiveQuery<Book>?) throws {
            // The oracle: Rill's walk of the tree on every model (Swift's answers, except where
            // Swift traps) and, for a complete translation, the evaluator on every record.
            let translation = PredicateTranslator.translate(predicate)
            var expected: Set<UUID> = []
            for book in books.values {
                if try TotalEvaluation.evaluate(predicate, book) { expected.insert(book.id) }
                if translation.isComplete, let node = translation.node {
                    let record = try RecordCoder.encode(book).withUnsafeBytes { try RecordValue(record: $0) }
                    let decided = QueryEvaluator.matches(node, record)
                    if decided != expected.contains(book.id) {
                        failures.append("\(name): the translation says \(decided) on \(book)")
                    }
                }
            }
            let fetched = Set(try context.fetch(FetchDescriptor(predicate: predicate)).map(\.id))
            if fetched != expected { failures.append("\(name): fetched \(fetched.count), expected \(expected.count)") }
            #expect(try context.fetchCount(FetchDescriptor(predicate: predicate)) == expected.count, "\(name)")
            if let query {
                let held = Set(query.map(\.id))
                if held != expected { failures.append("\(name): live \(held.count), expected \(expected.count)") }
            }
        }

        for (name, predicate) in shapes {
            let query = try? LiveQuery(FetchDescriptor(predicate: predicate), in: container)
            if let query { live.append((name, predicate, query)) }
            try check(name, predicate, query)
        }
        #expect(live.count > shapes.count / 2)
        // Saves move extreme values around; every live query follows them.
        for _ in 0..<4 {
            for _ in 0..<25 {
                let id = books.keys.randomElement(using: &random)!
                var book = Self.extreme(Int.random(in: 0..<1_000, using: &random), &random)
                book.id = id
                books[id] = book
                context.insert(book)
            }
            try context.save()
            for (name, predicate, query) in live {
                try query.catchUp()
                try check(name, predicate, query)
            }
        }
        #expect(failures.isEmpty, "seed \(random.seed): \(failures.count) disagreements, first: \(failures.prefix(4))")
    }

    /// Gadgets with extreme values in every field the fetch and text oracles query.
    private static func extremeGadgets(_ random: inout SeededGenerator) -> [Gadget] {
        func pick<T>(_ values: [T]) -> T { values.randomElement(using: &random)! }
        var gadgets: [Int: Gadget] = [:]
        for id in 0..<400 {
            let gadget = Gadget(
                id: pick([id, -id]), name: pick(["", "café", "Möbel", "z", "ca"]),
                maker: pick([nil, "Acme", "acmé", ""]),
                price: pick([Double.nan, .infinity, -.infinity, -0.0, .greatestFiniteMagnitude, 3, 500]),
                stock: pick([Int.min, -1, 0, 5, 200, Int.max]), rating: pick([nil, .nan, -.infinity, 2.5, 4]),
                tags: pick([[], [""], ["new", "sale"], ["Eco"]]),
                released: pick([Date.distantPast, .distantFuture, Date(timeIntervalSince1970: 1_700_000_000)]),
                active: Bool.random(using: &random),
                spec: Gadget.Spec(weight: pick([Int.min, 0, 500, Int.max]), color: ""))
            gadgets[gadget.id] = gadget
        }
        return gadgets.values.sorted { $0.id < $1.id }
    }

    @Test func fetchOracleShapesWithExtremeValues() throws {
        var random = SeededGenerator(label: "fetch shapes, extreme values")
        let container = try ModelContainer(
            for: Gadget.self, configurations: ModelConfiguration(url: directory.url.appending(path: "gadgets")))
        let context = container.mainContext
        let gadgets = Self.extremeGadgets(&random)
        for gadget in gadgets { context.insert(gadget) }
        try context.save()
        for round in 0..<150 {
            let (predicate, check, text) = FetchOracleTests.randomCase(&random)
            let descriptor = FetchDescriptor<Gadget>(predicate: predicate, sortBy: [SortDescriptor(\.stock)])
            let expected = gadgets.filter(check).map(\.id).sorted()
            let fetched = try context.fetch(descriptor).map(\.id).sorted()
            #expect(fetched == expected, "seed \(random.seed), round \(round): \(text)")
            let live = try LiveQuery(descriptor, in: container)
            #expect(live.map(\.id).sorted() == expected, "seed \(random.seed), round \(round): live \(text)")
        }
    }

    @Test func textQueryShapesWithExtremeValues() throws {
        var generator = TextQueryOracleTests.Generator(random: SeededGenerator(label: "text shapes, extreme values"))
        let container = try ModelContainer(
            for: Gadget.self, configurations: ModelConfiguration(url: directory.url.appending(path: "text")))
        let context = container.mainContext
        let gadgets = Self.extremeGadgets(&generator.random)
        for gadget in gadgets { context.insert(gadget) }
        try context.save()
        for round in 0..<200 {
            let (node, check) = generator.predicate(depth: 3)
            let text = "Gadget where \(node)"
            let expected = gadgets.filter(check).map(\.id)
            let rows = try container.store.run(QueryParser.parse(text))
            let ids = rows.map { row in row.key.withUnsafeBytes { Int(storageKey: $0)! } }.sorted()
            #expect(ids == expected, "seed \(generator.random.seed), round \(round): \(text)")
            let received = Lock<[QueryRow]>([])
            let live = try RecordLiveQuery(QueryParser.parse(text), store: container.store) { event in
                if case .initial(let rows, _) = event { received.withLock { $0 = rows } }
            }
            try live.catchUp()
            let held = received.withLock { $0 }.map { row in row.key.withUnsafeBytes { Int(storageKey: $0)! } }
                .sorted()
            #expect(held == expected, "seed \(generator.random.seed), round \(round): live \(text)")
        }
    }

    // MARK: - Agreement with Swift

    /// Rill's walk of the tree answers as Swift's evaluation wherever Swift does not trap.
    @Test func theTreeWalkAgreesWithSwift() throws {
        var random = SeededGenerator(label: "total evaluation against Swift")
        // Ordinary records, on which only these shapes trap in Swift.
        let trapping: Set<String> = ["copies - 1 > 2"]
        var books: [Book] = []
        for index in 0..<600 {
            var book = Self.extreme(index, &random)
            book.pages = Int.random(in: -1_000...1_000, using: &random)
            book.copies = UInt.random(in: 1...100, using: &random)
            book.place.zip = book.place.zip == nil ? nil : Int.random(in: -99_999...99_999, using: &random)
            for i in book.ingredients.indices { book.ingredients[i].grams = Int.random(in: -50...50, using: &random) }
            books.append(book)
        }
        var failures: [String] = []
        var compared = 0
        for (name, predicate) in PredicateOracleTests.predicates() where !trapping.contains(name) {
            for book in books {
                guard let swift = try? predicate.evaluate(book) else { continue }
                compared += 1
                let total = try TotalEvaluation.evaluate(predicate, book)
                if total != swift { failures.append("\(name) on \(book): Swift \(swift), Rill \(total)") }
            }
        }
        #expect(compared > 10_000)
        #expect(failures.isEmpty, "seed \(random.seed): \(failures.count) disagreements, first: \(failures.prefix(3))")
    }

    @Test func onlyPredicatesThatCanFailAreWalked() {
        let k = 3
        #expect(TotalEvaluation.mayFail(#Predicate<Book> { $0.pages * k > 5 }.expression))
        #expect(TotalEvaluation.mayFail(#Predicate<Book> { $0.tags.filter { $0.count / k > 1 }.isEmpty }.expression))
        #expect(TotalEvaluation.mayFail(#Predicate<Book> { ($0.pages...k).contains(1) }.expression))
        #expect(!TotalEvaluation.mayFail(#Predicate<Book> { $0.price * 2 > 5 && $0.title == "x" }.expression))
        #expect(TotalEvaluation.mayFail(#Predicate<Book> { $0.rating! > 2 }.expression))
        #expect(TotalEvaluation.mayFail(#Predicate<Book> { $0.tags[0] == "x" }.expression))
        #expect(!TotalEvaluation.mayFail(#Predicate<Book> { $0.tags.first == "x" }.expression))
    }
}
