import Foundation
import RillTestSupport
import RillWorkloads
import Testing

@testable import Rill

/// Translations against Swift's own evaluation: hand-written predicates over random records.
/// A complete translation must agree with `Predicate.evaluate` on every record; a partial one
/// must hold wherever the predicate does.
@Suite struct PredicateOracleTests {
    typealias Book = PredicateBook

    static let now = Date(timeIntervalSince1970: 1_700_000_000)

    private static let vocabulary = [
        "Café", "CAFE", "cafe", "café au lait", "Cafe\u{301}", "Crème brûlée", "naïve", "Zoë", "", "x", "X",
        "Straße", "ÉCOLE", "école", "salt", "Salt", "sea salt", "M", "m", "Paris", "paris", "hot", "a",
        "abc", "Moby Dick", "Cafeteria",
    ]

    private static func record(_ random: inout SeededGenerator) -> Book {
        func present(_ random: inout SeededGenerator) -> Bool { Int.random(in: 0..<3, using: &random) != 0 }
        func word(_ random: inout SeededGenerator) -> String { vocabulary.randomElement(using: &random)! }
        func words(_ random: inout SeededGenerator, max: Int) -> [String] {
            (0..<Int.random(in: 0...max, using: &random)).map { _ in word(&random) }
        }
        func days(_ range: ClosedRange<Int>, _ random: inout SeededGenerator) -> Date {
            now.addingTimeInterval(Double(Int.random(in: range, using: &random)) * 86_400)
        }
        let special = [0, 1, 3, 120, 300, 301, -1, -120].randomElement(using: &random)!
        let pages = Bool.random(using: &random) ? special : Int.random(in: -50...600, using: &random)
        var ingredients: [PredicateIngredient] = []
        for _ in 0..<Int.random(in: 0...3, using: &random) {
            let name = word(&random)
            let grams = Int.random(in: -5...50, using: &random)
            ingredients.append(PredicateIngredient(name: name, grams: grams, labels: words(&random, max: 2)))
        }
        let title = word(&random)
        let content = word(&random) + " " + word(&random)
        let subtitle = present(&random) ? word(&random) : nil
        let copies = UInt.random(in: 0...6, using: &random)
        let price = Double(Int.random(in: -1000...10_000, using: &random)) / 100
        let rating = present(&random) ? Double(Int.random(in: -2...10, using: &random)) / 2 : nil
        let isRead = Bool.random(using: &random)
        let addedAt = days(-20...5, &random)
        let plannedDate = present(&random) ? days(-5...5, &random) : nil
        let last = UInt8.random(in: 0...255, using: &random)
        let id = Bool.random(using: &random) ? fixedID : UUID(uuid: (0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, last))
        let genre = PredicateGenre.allCases.randomElement(using: &random)!
        let city = word(&random)
        let zip = present(&random) ? Int.random(in: 0...99_999, using: &random) : nil
        let tags = words(&random, max: 3)
        return Book(
            title: title, content: content, subtitle: subtitle, pages: pages, copies: copies, price: price,
            rating: rating, isRead: isRead, addedAt: addedAt, plannedDate: plannedDate, id: id, genre: genre,
            place: PredicatePlace(city: city, zip: zip), ingredients: ingredients, tags: tags)
    }

    static let fixedID = UUID(uuidString: "00000000-0000-0000-0000-000000000007")!

    /// The predicates, named; the names of those expected to translate only partly are listed in
    /// `partial`.
    static func predicates() -> [(String, Predicate<Book>)] {
        let now = Self.now
        let lastWeek = now.addingTimeInterval(-7 * 86_400)
        let q = "cafe"
        let s = "salt"
        let id = fixedID
        let genres: [PredicateGenre] = [.fiction, .poetry]
        let fiction = PredicateGenre.fiction
        let closed = 100...300
        let open = 100..<300
        let noRating: Double? = nil
        return [
            ("pages > 300 && !isRead", #Predicate { $0.pages > 300 && !$0.isRead }),
            ("rating != nil", #Predicate { $0.rating != nil }),
            ("rating == nil", #Predicate { $0.rating == nil }),
            ("rating == noRating", #Predicate { $0.rating == noRating }),
            ("addedAt > lastWeek", #Predicate { $0.addedAt > lastWeek }),
            ("addedAt in week", #Predicate { $0.addedAt < now && $0.addedAt >= lastWeek }),
            (
                "localizedStandardContains ||",
                #Predicate { $0.title.localizedStandardContains(q) || $0.content.localizedStandardContains(q) }
            ),
            ("localizedStandardContains CAFE", #Predicate { $0.title.localizedStandardContains("CAFE") }),
            ("localizedStandardContains field", #Predicate { $0.content.localizedStandardContains($0.title) }),
            ("plannedDate ?? now", #Predicate { ($0.plannedDate ?? now) > now }),
            ("plannedDate == nil", #Predicate { $0.plannedDate == nil }),
            ("ingredient name contains", #Predicate { $0.ingredients.contains { $0.name.contains(s) } }),
            ("tags.contains(x)", #Predicate { $0.tags.contains("x") }),
            ("[1,2,3].contains(pages)", #Predicate { [1, 2, 3].contains($0.pages) }),
            ("pages == 120", #Predicate { $0.pages == 120 }),
            ("pages != 120", #Predicate { $0.pages != 120 }),
            ("pages < 0", #Predicate { $0.pages < 0 }),
            ("pages <= 1", #Predicate { $0.pages <= 1 }),
            ("pages >= 500", #Predicate { $0.pages >= 500 }),
            ("price > 9.5", #Predicate { $0.price > 9.5 }),
            ("copies > 3", #Predicate { $0.copies > 3 }),
            ("title == Café", #Predicate { $0.title == "Café" }),
            ("title != cafe", #Predicate { $0.title != "cafe" }),
            ("title < M", #Predicate { $0.title < "M" }),
            ("title.contains(af)", #Predicate { $0.title.contains("af") }),
            ("title.contains(e)", #Predicate { $0.title.contains("e") }),
            ("title.contains(Cafe)", #Predicate { $0.title.contains("Cafe") }),
            ("title.contains(empty)", #Predicate { $0.title.contains("") }),
            ("title.starts(with: C)", #Predicate { $0.title.starts(with: "C") }),
            ("title.starts(with: Cafe)", #Predicate { $0.title.starts(with: "Cafe") }),
            ("isRead", #Predicate { $0.isRead }),
            ("!isRead", #Predicate { !$0.isRead }),
            ("isRead == false", #Predicate { $0.isRead == false }),
            ("genre == fiction", #Predicate { $0.genre == fiction }),
            ("genre != fiction", #Predicate { $0.genre != fiction }),
            ("genres.contains(genre)", #Predicate { genres.contains($0.genre) }),
            ("id == fixed", #Predicate { $0.id == id }),
            ("place.city == Paris", #Predicate { $0.place.city == "Paris" }),
            ("place.zip == nil", #Predicate { $0.place.zip == nil }),
            ("place.zip! > 50000", #Predicate { $0.place.zip != nil && $0.place.zip! > 50_000 }),
            ("place.zip ?? 0", #Predicate { ($0.place.zip ?? 0) > 50_000 }),
            ("rating.flatMap == true", #Predicate { $0.rating.flatMap { $0 > 3 } == true }),
            ("rating.flatMap == false", #Predicate { $0.rating.flatMap { $0 > 3 } == false }),
            ("rating.flatMap != true", #Predicate { $0.rating.flatMap { $0 > 3 } != true }),
            ("rating.flatMap arithmetic", #Predicate { $0.rating.flatMap { $0 * 2 > 5 } == true }),
            ("rating ?? 0 >= 2.5", #Predicate { ($0.rating ?? 0) >= 2.5 }),
            ("rating! > 2", #Predicate { $0.rating! > 2 }),
            ("subtitle?.contains", #Predicate { $0.subtitle?.contains("a") == true }),
            ("subtitle?.count == 0", #Predicate { $0.subtitle?.count == 0 }),
            ("subtitle?.isEmpty != false", #Predicate { $0.subtitle?.isEmpty != false }),
            ("(subtitle ?? \"\").isEmpty", #Predicate { ($0.subtitle ?? "").isEmpty }),
            ("subtitle == nil || contains", #Predicate { $0.subtitle == nil || $0.subtitle!.contains("a") }),
            ("pages + 10 > 100", #Predicate { $0.pages + 10 > 100 }),
            ("pages - 50 < 0", #Predicate { $0.pages - 50 < 0 }),
            ("pages * 2 == 240", #Predicate { $0.pages * 2 == 240 }),
            ("pages / 7 == 3", #Predicate { $0.pages / 7 == 3 }),
            ("pages / 7 == -3", #Predicate { $0.pages / 7 == -3 }),
            ("pages % 2 == 0", #Predicate { $0.pages % 2 == 0 }),
            ("pages % 7 == -1", #Predicate { $0.pages % 7 == -1 }),
            ("-pages < -100", #Predicate { -$0.pages < -100 }),
            ("price / 2 > 10", #Predicate { $0.price / 2 > 10 }),
            ("-price > 0", #Predicate { -$0.price > 0 }),
            ("copies + 1 && genre", #Predicate { $0.copies + 1 > 3 && $0.genre == fiction }),
            ("copies - 1 > 2", #Predicate { $0.copies - 1 > 2 }),
            ("ternary", #Predicate { ($0.isRead ? $0.pages : 0) > 100 }),
            ("(1...5).contains(tags.count)", #Predicate { (1...5).contains($0.tags.count) }),
            ("(100..<300).contains(pages)", #Predicate { (100..<300).contains($0.pages) }),
            ("closed.contains(pages)", #Predicate { closed.contains($0.pages) }),
            ("open.contains(pages)", #Predicate { open.contains($0.pages) }),
            ("tags.isEmpty", #Predicate { $0.tags.isEmpty }),
            ("!tags.isEmpty", #Predicate { !$0.tags.isEmpty }),
            ("tags.count > 2", #Predicate { $0.tags.count > 2 }),
            ("title.count < 5", #Predicate { $0.title.count < 5 }),
            ("title.isEmpty", #Predicate { $0.title.isEmpty }),
            ("tags == [x]", #Predicate { $0.tags == ["x"] }),
            ("ingredients.allSatisfy grams > 10", #Predicate { $0.ingredients.allSatisfy { $0.grams > 10 } }),
            ("ingredients.contains grams < 0", #Predicate { $0.ingredients.contains { $0.grams < 0 } }),
            (
                "ingredients.contains name && grams",
                #Predicate { $0.ingredients.contains { $0.name == "salt" && $0.grams > 5 } }
            ),
            ("tags.allSatisfy contains a", #Predicate { $0.tags.allSatisfy { $0.contains("a") } }),
            ("tags.contains title", #Predicate { book in book.tags.contains { $0 == book.title } }),
            (
                "ingredients localized",
                #Predicate { $0.ingredients.contains { $0.name.localizedStandardContains(q) } }
            ),
            ("ingredients labels hot", #Predicate { $0.ingredients.contains { $0.labels.contains("hot") } }),
            (
                "ingredients labels nested",
                #Predicate { $0.ingredients.contains { $0.labels.contains { $0.starts(with: "h") } } }
            ),
            ("ingredients.count == 0", #Predicate { $0.ingredients.count == 0 }),
            ("pages > 100 || rating == nil", #Predicate { $0.pages > 100 || $0.rating == nil }),
            ("!(pages > 100 && isRead)", #Predicate { !($0.pages > 100 && $0.isRead) }),
            // Partly translatable.
            ("computed && pages", #Predicate { $0.pages > 100 && $0.displayTitle == "CAFE" }),
            ("tags.first && isRead", #Predicate { $0.isRead && $0.tags.first == "x" }),
            ("tags.max && pages", #Predicate { $0.tags.max() == "x" && $0.pages < 300 }),
            ("or with untranslatable", #Predicate { $0.pages > 100 || $0.tags.first == "x" }),
            ("not with untranslatable", #Predicate { !($0.pages > 100 && $0.tags.first == "x") }),
            (
                "outer element in inner quantifier",
                #Predicate { book in book.isRead && book.ingredients.contains { i in book.tags.contains(i.name) } }
            ),
        ]
    }

    static let partial: Set<String> = [
        "computed && pages", "tags.first && isRead", "tags.max && pages", "or with untranslatable",
        "not with untranslatable", "outer element in inner quantifier",
    ]

    @Test func translationsAgreeWithSwift() throws {
        let seed = UInt64.random(in: 0...UInt64.max)
        print("PredicateOracleTests seed: \(seed)")
        var random = SeededGenerator(seed: seed)
        var records: [(Book, RecordValue)] = []
        for _ in 0..<1_500 {
            let book = Self.record(&random)
            let bytes = try RecordCoder.encode(book)
            records.append((book, try bytes.withUnsafeBytes { try RecordValue(record: $0) }))
        }
        let predicates = Self.predicates()
        #expect(predicates.count >= 60)
        var failures: [String] = []
        var complete = 0
        for (name, predicate) in predicates {
            let translation = PredicateTranslator.translate(predicate)
            if translation.isComplete { complete += 1 }
            #expect(translation.isComplete == !Self.partial.contains(name), "\(name): \(translation.untranslated)")
            var matched = 0
            // Swift's own evaluation where it cannot trap; Rill's total evaluation otherwise
            // (which must agree with Swift's wherever both run: see `TotalEvaluationTests`).
            let mayFail = TotalEvaluation.mayFail(predicate.expression)
            for (book, value) in records {
                let evaluated = mayFail ? try? TotalEvaluation.evaluate(predicate, book) : try? predicate.evaluate(book)
                guard let expected = evaluated else { continue }
                if expected { matched += 1 }
                let actual = translation.node.map { QueryEvaluator.matches($0, value) } ?? true
                if translation.isComplete ? actual != expected : expected && !actual {
                    failures.append("\(name) on \(book): Swift \(expected), query \(actual)")
                }
            }
            #expect(matched > 0, "\(name) matches no record")
        }
        print("PredicateOracleTests: \(complete) of \(predicates.count) predicates translated completely")
        #expect(failures.isEmpty, "seed \(seed): \(failures.count) disagreements, first: \(failures.prefix(5))")
    }
}
