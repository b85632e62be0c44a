import Foundation
import RillWorkloads
import Testing

@testable import Rill

/// Prepared translations against translating anew: predicates of one source form, built again
/// and again with random captured values (extreme ones included), must be decided exactly as a
/// fresh translation of each decides it, while one template serves each shape of their values.
@Suite struct PreparedTranslationTests {
    typealias Book = PredicateBook

    /// One source form of a predicate: a new `Predicate` from random values at each call, all of
    /// one expression type.
    typealias Form = (name: String, make: @Sendable (inout SeededGenerator) -> Predicate<Book>)

    static let extremeInts = [Int.min, Int.min + 1, -1, 0, 1, Int.max - 1, Int.max]
    static let extremeDoubles: [Double] = [
        .nan, .infinity, -.infinity, -0.0, 0.0, .leastNonzeroMagnitude, .greatestFiniteMagnitude, -1.5, 2.5,
    ]
    static let texts = ["", "a", "Zürich", "é", "e\u{301}", "\u{0}", "🙂", "long text with spaces", "A"]

    static func int(_ random: inout SeededGenerator) -> Int {
        Bool.random(using: &random)
            ? extremeInts.randomElement(using: &random)! : Int.random(in: -1_000...1_000, using: &random)
    }

    static func double(_ random: inout SeededGenerator) -> Double {
        Bool.random(using: &random)
            ? extremeDoubles.randomElement(using: &random)! : Double(Int.random(in: -999...999, using: &random)) / 8
    }

    static func text(_ random: inout SeededGenerator) -> String {
        texts.randomElement(using: &random)!
    }

    /// The forms, each written once here so that every call builds a predicate of one type.
    static let forms: [Form] = [
        (
            "equality",
            { random in
                let k = int(&random); return #Predicate { $0.pages == k }
            }
        ),
        (
            "an operator chosen at run time",
            { random in
                let k = int(&random)
                // Both are `Comparison<KeyPath<…, Int>, Value<Int>>`: only the operator differs.
                return Bool.random(using: &random) ? #Predicate { $0.pages < k } : #Predicate { $0.pages > k }
            }
        ),
        (
            "a key path chosen at run time",
            { random in
                let s = text(&random)
                // Both are `Equal<KeyPath<…, String>, Value<String>>`: only the key path differs.
                return Bool.random(using: &random) ? #Predicate { $0.title == s } : #Predicate { $0.content == s }
            }
        ),
        (
            "an optional, nil or not",
            { random in
                let rating: Double? = Bool.random(using: &random) ? nil : double(&random)
                return #Predicate { $0.rating == rating }
            }
        ),
        (
            "a captured array of any length",
            { random in
                let list = (0..<Int.random(in: 0...5, using: &random)).map { _ in int(&random) }
                return #Predicate { list.contains($0.pages) }
            }
        ),
        (
            "captured ranges",
            { random in
                let a = Int.random(in: -50...50, using: &random)
                let b = a + Int.random(in: 0...50, using: &random)
                let closed = a...b
                let open = a..<b
                return #Predicate { closed.contains($0.pages) && !open.contains($0.pages) }
            }
        ),
        (
            "negated captured values",
            { random in
                // Not `Int.min`, whose negation overflows: that one is translated anew each time.
                let a = max(int(&random), .min + 1)
                let b = double(&random)
                return #Predicate { $0.pages > -a && $0.price <= -b && $0.pages != -7 }
            }
        ),
        (
            "range bounds from values",
            { random in
                let a = double(&random)
                let b = double(&random)
                return #Predicate { (a...b).contains($0.price) }
            }
        ),
        (
            "and, or, not, strings",
            { random in
                let k = int(&random)
                let s = text(&random)
                let t = text(&random)
                return #Predicate { ($0.pages > k && $0.title.contains(s)) || !$0.isRead || $0.content.starts(with: t) }
            }
        ),
        (
            "arithmetic",
            { random in
                let k = int(&random)
                let j = int(&random)
                let x = double(&random)
                return #Predicate { $0.pages * k - j > 3 && $0.price / x < 2 }
            }
        ),
        (
            "a quantifier",
            { random in
                let g = int(&random)
                let n = text(&random)
                return #Predicate { $0.ingredients.contains { $0.grams > g && $0.name == n } }
            }
        ),
        (
            "four quantifiers: five variables, the last past those a signature keeps in place",
            { random in
                let g = int(&random)
                let h = int(&random)
                let n = text(&random)
                return #Predicate<Book> { (book: Book) -> Bool in
                    (book.ingredients.contains { $0.grams > g } && book.ingredients.contains { $0.grams < h })
                        && (book.ingredients.contains { $0.name == n } && book.ingredients.contains { $0.grams != g })
                }
            }
        ),
        (
            "optionals: coalescing and chaining",
            { random in
                let s = text(&random)
                let z = int(&random)
                return #Predicate { ($0.subtitle ?? s) == s && $0.place.zip.flatMap { $0 + z } != nil }
            }
        ),
        (
            "a conjunct left untranslated",
            { random in
                let s = text(&random)
                let k = int(&random)
                return #Predicate { $0.displayTitle == s && $0.pages >= k }
            }
        ),
        (
            "dates, identifiers, enums, arrays",
            { random in
                let date = Date(timeIntervalSince1970: double(&random).isFinite ? Double(int(&random) % 1_000_000) : 0)
                let id = UUID()
                let genre = PredicateGenre.allCases.randomElement(using: &random)!
                let tags = (0..<Int.random(in: 0...3, using: &random)).map { _ in text(&random) }
                return #Predicate { $0.addedAt > date && $0.id != id && $0.genre == genre && $0.tags == tags }
            }
        ),
    ]

    /// Every form, bound to random values: what the prepared decision holds equals a fresh
    /// translation of the same predicate.
    @Test func preparedDecisionsEqualFreshTranslations() throws {
        var random = SeededGenerator(label: "prepared translations")
        for form in Self.forms {
            for _ in 0..<200 {
                let predicate = form.make(&random)
                let prepared = try #require(
                    PreparedPredicates.modelPredicate(for: predicate), "\(form.name): not prepared: \(predicate)")
                let fresh = ModelPredicate(translating: predicate)
                #expect(prepared.translation?.node == fresh.translation?.node, "\(form.name): \(predicate)")
                #expect(prepared.translation?.isComplete == fresh.translation?.isComplete, "\(form.name)")
                #expect(prepared.exact == fresh.exact, "\(form.name): \(predicate)")
                #expect(prepared.recordTest == fresh.recordTest, "\(form.name)")
                #expect(prepared.relationshipFields == fresh.relationshipFields, "\(form.name)")
            }
        }
    }

    /// One template per shape of the captured values: the translation is made once, not at
    /// every predicate. (On a model of this file's own: the table is keyed by model and
    /// expression type, and other suites fetch books with predicates of the same types.)
    @Test func oneTemplateServesEveryPredicateOfAShape() {
        var random = SeededGenerator(label: "prepared templates")
        func equality(_ k: Int) -> Predicate<PreparedHolder> { #Predicate { $0.score == k } }
        for _ in 0..<100 { _ = PreparedPredicates.modelPredicate(for: equality(Self.int(&random))) }
        #expect(PreparedPredicates.templateCount(for: equality(1)) == 1)
        // Two operators, two templates.
        func comparison(_ k: Int, less: Bool) -> Predicate<PreparedHolder> {
            less ? #Predicate { $0.score < k } : #Predicate { $0.score > k }
        }
        for _ in 0..<100 {
            _ = PreparedPredicates.modelPredicate(for: comparison(Self.int(&random), less: .random(using: &random)))
        }
        #expect(PreparedPredicates.templateCount(for: comparison(1, less: true)) == 2)
        // A nil and a value: two shapes.
        func optional(_ x: Double?) -> Predicate<PreparedHolder> { #Predicate { $0.rating == x } }
        for _ in 0..<100 {
            _ = PreparedPredicates.modelPredicate(
                for: optional(Bool.random(using: &random) ? nil : Self.double(&random)))
        }
        #expect(PreparedPredicates.templateCount(for: optional(nil)) == 2)
    }

    /// A captured value without a stored form is never prepared, and a later predicate of the
    /// same form with one still is.
    @Test func aValueWithoutAStoredFormIsTranslatedAnew() throws {
        func make(_ url: URL) -> Predicate<PreparedHolder> { #Predicate { $0.link == url } }
        let relative = URL(string: "a/b", relativeTo: URL(string: "https://example.com/")!)!
        #expect(PreparedPredicates.modelPredicate(for: make(relative)) == nil)
        #expect(ModelPredicate(of: FetchDescriptor(predicate: make(relative))).exact == nil)
        let absolute = try #require(PreparedPredicates.modelPredicate(for: make(URL(string: "https://a.example/")!)))
        #expect(absolute.exact == .compare(.equal, .field(["link"]), .literal(.url("https://a.example/"))))
    }

    /// A NaN, which equals nothing, not even itself, makes a template like any other value.
    @Test func aNaNMakesATemplate() throws {
        func make(_ x: Double) -> Predicate<Book> { #Predicate { $0.price < x || $0.rating == x } }
        let nan = try #require(PreparedPredicates.modelPredicate(for: make(.nan)))
        #expect(nan.exact.map { "\($0)" } == ModelPredicate(translating: make(.nan)).exact.map { "\($0)" })
        let two = try #require(PreparedPredicates.modelPredicate(for: make(2)))
        #expect(two.exact == ModelPredicate(translating: make(2)).exact)
        #expect(PreparedPredicates.templateCount(for: make(3)) == 1)
    }

    /// A predicate is bound to the template of its values' shapes only, whichever shapes came
    /// first: a nil first, then values (a nil's template holds no stand-in for a value), and
    /// arrays shortest first, then longer and shorter again. (On a model of its own, so that the
    /// templates are made in this order.)
    @Test func eachShapeBindsItsOwnTemplate() throws {
        func optional(_ x: Double?) -> Predicate<PreparedShapes> { #Predicate { $0.rating == x } }
        func list(_ values: [Int]) -> Predicate<PreparedShapes> { #Predicate { values.contains($0.score) } }
        for x in [nil, 2.5, nil, -1, .nan, nil] as [Double?] {
            let prepared = try #require(PreparedPredicates.modelPredicate(for: optional(x)))
            let fresh = ModelPredicate(translating: optional(x))
            #expect(prepared.exact.map { "\($0)" } == fresh.exact.map { "\($0)" }, "\(String(describing: x))")
        }
        for values in [[], [1], [1, 2], [], [3], [4, 5, 6], [7, 8]] as [[Int]] {
            let prepared = try #require(PreparedPredicates.modelPredicate(for: list(values)))
            #expect(prepared.exact == ModelPredicate(translating: list(values)).exact, "\(values)")
        }
        #expect(PreparedPredicates.templateCount(for: optional(nil)) == 2)
        #expect(PreparedPredicates.templateCount(for: list([])) == 4)
    }

    /// A stand-in cannot be confused with a captured identifier: captured identifiers are bound
    /// in, never read as stand-ins, even one with a stand-in's bytes.
    @Test func capturedIdentifiersAreBoundLikeAnyValue() throws {
        func make(_ id: UUID) -> Predicate<Book> { #Predicate { $0.id == id } }
        let standInBytes: uuid_t = (0xFF, 0x00, 0xFF, 0x52, 0x49, 0x4C, 0x4C, 0x3F, 0, 0, 0, 0, 0, 0, 0, 0)
        for id in [UUID(uuid: standInBytes), UUID(), UUID(uuid: standInBytes)] {
            let prepared = try #require(PreparedPredicates.modelPredicate(for: make(id)))
            #expect(prepared.exact == .compare(.equal, .field(["id"]), .literal(.uuid(id))))
            #expect(prepared.exact == ModelPredicate(translating: make(id)).exact)
        }
    }
}

/// A model of these tests alone, with a URL, a value a translation may refuse.
struct PreparedHolder: PersistentModel {
    var id: Int
    var link: URL
    var score: Int
    var rating: Double?
}

/// A model of `eachShapeBindsItsOwnTemplate` alone.
struct PreparedShapes: PersistentModel {
    var id: Int
    var rating: Double?
    var score: Int
}
