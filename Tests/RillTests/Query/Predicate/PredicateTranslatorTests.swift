import Foundation
import Testing

@testable import Rill

/// Each supported expression type translated to its exact `QueryNode`, and the refusals.
@Suite struct PredicateTranslatorTests {
    typealias Book = PredicateBook

    static let now = Date(timeIntervalSince1970: 1_700_000_000)

    private func complete(_ predicate: Predicate<Book>) -> QueryNode? {
        let translation = PredicateTranslator.translate(predicate)
        #expect(translation.isComplete, "untranslated: \(translation.untranslated)")
        #expect(translation.untranslated.isEmpty)
        return translation.node
    }

    private func field(_ path: String...) -> QueryNode { .field(path) }
    private func int(_ value: Int64) -> QueryNode { .literal(.int(value)) }
    private func string(_ value: String) -> QueryNode { .literal(.string(value)) }

    // MARK: - Comparisons and values

    @Test func comparisonsOfFields() {
        #expect(complete(#Predicate { $0.pages == 3 }) == .compare(.equal, field("pages"), int(3)))
        #expect(complete(#Predicate { $0.pages != 3 }) == .compare(.notEqual, field("pages"), int(3)))
        #expect(complete(#Predicate { $0.pages < 3 }) == .compare(.less, field("pages"), int(3)))
        #expect(complete(#Predicate { $0.pages <= 3 }) == .compare(.lessOrEqual, field("pages"), int(3)))
        #expect(complete(#Predicate { $0.pages > 3 }) == .compare(.greater, field("pages"), int(3)))
        #expect(complete(#Predicate { $0.pages >= 3 }) == .compare(.greaterOrEqual, field("pages"), int(3)))
        #expect(complete(#Predicate { 3 < $0.pages }) == .compare(.less, int(3), field("pages")))
        #expect(complete(#Predicate { $0.title < "M" }) == .compare(.less, field("title"), string("M")))
        #expect(
            complete(#Predicate { $0.pages > $0.tags.count })
                == .compare(.greater, field("pages"), .count(field("tags"))))
    }

    @Test func capturedValues() {
        let now = Self.now
        let id = UUID()
        let url = URL(string: "https://example.com/a")!
        let data = Data([1, 2, 3])
        let small: Int8 = -4
        let big = UInt64.max
        let float: Float = 1.5
        let missing: Double? = nil
        let present: Double? = 2.5
        #expect(complete(#Predicate { $0.addedAt > now }) == .compare(.greater, field("addedAt"), .literal(.date(now))))
        #expect(complete(#Predicate { $0.id == id }) == .compare(.equal, field("id"), .literal(.uuid(id))))
        #expect(complete(#Predicate { $0.isRead == true }) == .compare(.equal, field("isRead"), .literal(.bool(true))))
        #expect(complete(#Predicate { $0.price > 2.5 }) == .compare(.greater, field("price"), .literal(.double(2.5))))
        #expect(complete(#Predicate { $0.rating == missing }) == .compare(.equal, field("rating"), .literal(.null)))
        #expect(
            complete(#Predicate { $0.rating == present }) == .compare(.equal, field("rating"), .literal(.double(2.5))))
        let poetry = PredicateGenre.poetry
        #expect(complete(#Predicate { $0.genre == poetry }) == .compare(.equal, field("genre"), string("poetry")))
        #expect(
            complete(#Predicate { $0.tags == ["a", "b"] })
                == .compare(.equal, field("tags"), .literal(.array([.string("a"), .string("b")]))))
        #expect(PredicateValues.literal(url) == .url("https://example.com/a"))
        #expect(PredicateValues.literal(URL(string: "a", relativeTo: url)!) == nil)
        #expect(PredicateValues.literal(data) == .data(data))
        #expect(PredicateValues.literal(small) == .int(-4))
        #expect(PredicateValues.literal(big) == .uint(UInt64.max))
        #expect(PredicateValues.literal(float) == .float(1.5))
        #expect(PredicateValues.literal(Decimal(string: "1.25")!) == .decimal("1.25"))
        #expect(PredicateValues.literal(Int128(1) << 100) == nil)
        #expect(PredicateValues.literal(PredicatePlace(city: "a", zip: nil)) == nil)
    }

    @Test func nilLiterals() {
        #expect(complete(#Predicate { $0.rating != nil }) == .compare(.notEqual, field("rating"), .literal(.null)))
        #expect(
            complete(#Predicate { $0.place.zip == nil }) == .compare(.equal, field("place", "zip"), .literal(.null)))
    }

    // MARK: - Logic

    @Test func logic() {
        #expect(
            complete(#Predicate { $0.pages > 300 && !$0.isRead })
                == .and([.compare(.greater, field("pages"), int(300)), .not(field("isRead"))]))
        #expect(
            complete(#Predicate { $0.pages > 300 || $0.isRead || $0.price < 1 })
                == .or([
                    .compare(.greater, field("pages"), int(300)), field("isRead"),
                    .compare(.less, field("price"), .literal(.double(1))),
                ]))
        #expect(
            complete(#Predicate { !($0.isRead && $0.pages == 1) })
                == .not(.and([field("isRead"), .compare(.equal, field("pages"), int(1))])))
        #expect(complete(#Predicate { $0.isRead }) == field("isRead"))
    }

    @Test func conditional() {
        #expect(
            complete(#Predicate { ($0.isRead ? $0.pages : 0) > 10 })
                == .compare(.greater, .conditional(field("isRead"), then: field("pages"), otherwise: int(0)), int(10)))
    }

    // MARK: - Key paths

    @Test func nestedKeyPaths() {
        #expect(
            complete(#Predicate { $0.place.city == "Paris" })
                == .compare(.equal, field("place", "city"), string("Paris")))
        #expect(KeyPathNames.names(of: \Book.place.city, root: Book.self) == ["place", "city"])
    }

    @Test func countAndIsEmpty() {
        #expect(complete(#Predicate { $0.tags.count > 2 }) == .compare(.greater, .count(field("tags")), int(2)))
        #expect(complete(#Predicate { $0.title.count == 4 }) == .compare(.equal, .count(field("title")), int(4)))
        #expect(complete(#Predicate { $0.tags.isEmpty }) == .compare(.equal, .count(field("tags")), int(0)))
        #expect(complete(#Predicate { !$0.title.isEmpty }) == .not(.compare(.equal, .count(field("title")), int(0))))
    }

    @Test func computedPropertiesAreRefused() {
        let translation = PredicateTranslator.translate(#Predicate<Book> { $0.displayTitle == "A" })
        #expect(translation.node == nil)
        #expect(!translation.isComplete)
        #expect(translation.untranslated.count == 1)
        #expect(KeyPathNames.names(of: \Book.displayTitle, root: Book.self) == nil)
        #expect(KeyPathNames.names(of: \Book.place.zip, root: Book.self) == ["place", "zip"])
        #expect(KeyPathNames.names(of: \Book.rating?.magnitude, root: Book.self) == nil)
        #expect(KeyPathNames.names(of: \Book.title, root: PredicatePlace.self) == nil)
    }

    // MARK: - Optionals

    @Test func nilCoalescing() {
        let now = Self.now
        #expect(
            complete(#Predicate { ($0.plannedDate ?? now) > now })
                == .compare(.greater, .coalesce(field("plannedDate"), .literal(.date(now))), .literal(.date(now))))
    }

    @Test func forcedUnwrap() {
        #expect(complete(#Predicate { $0.rating! > 2 }) == .compare(.greater, field("rating"), .literal(.double(2))))
    }

    @Test func flatMap() {
        let body = QueryNode.compare(.greater, field("rating"), .literal(.double(3)))
        let guarded = QueryNode.conditional(
            .compare(.equal, field("rating"), .literal(.null)), then: .literal(.null), otherwise: body)
        #expect(
            complete(#Predicate { $0.rating.flatMap { $0 > 3 } == true })
                == .compare(.equal, guarded, .literal(.bool(true))))
        #expect(
            complete(#Predicate { $0.subtitle?.count == 3 })
                == .compare(
                    .equal,
                    .conditional(
                        .compare(.equal, field("subtitle"), .literal(.null)), then: .literal(.null),
                        otherwise: .count(field("subtitle"))),
                    int(3)))
    }

    // MARK: - Arithmetic

    @Test func arithmetic() {
        #expect(
            complete(#Predicate { $0.pages + 1 > 2 })
                == .compare(.greater, .arithmetic(.add, field("pages"), int(1)), int(2)))
        #expect(
            complete(#Predicate { $0.pages - 1 > 2 })
                == .compare(.greater, .arithmetic(.subtract, field("pages"), int(1)), int(2)))
        #expect(
            complete(#Predicate { $0.pages * 2 > 2 })
                == .compare(.greater, .arithmetic(.multiply, field("pages"), int(2)), int(2)))
        #expect(
            complete(#Predicate { $0.pages / 2 > 2 })
                == .compare(.greater, .arithmetic(.divide, field("pages"), int(2)), int(2)))
        #expect(
            complete(#Predicate { $0.pages % 2 == 0 })
                == .compare(.equal, .arithmetic(.remainder, field("pages"), int(2)), int(0)))
        #expect(
            complete(#Predicate { $0.price / 2 > 1 })
                == .compare(.greater, .arithmetic(.divide, field("price"), .literal(.double(2))), .literal(.double(1))))
        #expect(complete(#Predicate { -$0.pages < 0 }) == .compare(.less, .negate(field("pages")), int(0)))
    }

    @Test func unsignedArithmeticIsTranslated() {
        // Exact in the evaluator (integers are computed in 128 bits), so it answers as Swift does
        // wherever Swift does not trap.
        #expect(
            complete(#Predicate { $0.copies + 1 > 3 })
                == .compare(.greater, .arithmetic(.add, field("copies"), .literal(.uint(1))), .literal(.uint(3))))
        #expect(complete(#Predicate { $0.copies > 3 }) == .compare(.greater, field("copies"), .literal(.uint(3))))
    }

    // MARK: - Sequences and strings

    @Test func containsValue() {
        #expect(
            complete(#Predicate { [1, 2, 3].contains($0.pages) }) == .isIn(field("pages"), [int(1), int(2), int(3)]))
        #expect(
            complete(#Predicate { $0.tags.contains("x") })
                == .any(field("tags"), body: .compare(.equal, .element([]), string("x"))))
        let genres: [PredicateGenre] = [.fiction, .essay]
        #expect(
            complete(#Predicate { genres.contains($0.genre) })
                == .isIn(field("genre"), [string("fiction"), string("essay")]))
    }

    @Test func quantifiers() {
        let s = "salt"
        #expect(
            complete(#Predicate { $0.ingredients.contains { $0.name.contains(s) } })
                == .any(field("ingredients"), body: .string(.contains, .element(["name"]), string("salt"), [])))
        #expect(
            complete(#Predicate { $0.ingredients.allSatisfy { $0.grams > 1 } })
                == .all(field("ingredients"), body: .compare(.greater, .element(["grams"]), int(1))))
        #expect(
            complete(#Predicate { book in book.tags.contains { $0 == book.title } })
                == .any(field("tags"), body: .compare(.equal, .element([]), field("title"))))
        #expect(
            complete(#Predicate { $0.ingredients.contains { $0.labels.contains("hot") } })
                == .any(
                    field("ingredients"),
                    body: .any(.element(["labels"]), body: .compare(.equal, .element([]), string("hot")))))
    }

    @Test func outerElementsInsideInnerQuantifiersAreRefused() {
        let translation = PredicateTranslator.translate(
            #Predicate<Book> { book in book.ingredients.contains { i in book.tags.contains(i.name) } })
        #expect(translation.node == nil)
        let nested = PredicateTranslator.translate(
            #Predicate<Book> { book in book.ingredients.contains { i in i.labels.contains { $0 == i.name } } })
        #expect(nested.node == nil)
    }

    @Test func strings() {
        #expect(
            complete(#Predicate { $0.title.contains("af") }) == .string(.contains, field("title"), string("af"), []))
        #expect(
            complete(#Predicate { $0.title.starts(with: "C") }) == .string(.beginsWith, field("title"), string("C"), [])
        )
        let q = "cafe"
        #expect(
            complete(#Predicate { $0.title.localizedStandardContains(q) || $0.content.localizedStandardContains(q) })
                == .or([
                    .string(.contains, field("title"), string("cafe"), [.caseInsensitive, .diacriticInsensitive]),
                    .string(.contains, field("content"), string("cafe"), [.caseInsensitive, .diacriticInsensitive]),
                ]))
    }

    @Test func localizedStandardContainsEvaluates() throws {
        let predicate = #Predicate<String> { $0.localizedStandardContains("cafe") }
        #expect(try predicate.evaluate("Un CAFÉ noir"))
        #expect(try predicate.evaluate("Café"))
        #expect(try !predicate.evaluate("tea"))
    }

    @Test func ranges() {
        #expect(
            complete(#Predicate { (1...5).contains($0.pages) })
                == .between(field("pages"), lower: int(1), upper: int(5)))
        #expect(
            complete(#Predicate { (1..<5).contains($0.pages) })
                == .and([.compare(.greaterOrEqual, field("pages"), int(1)), .compare(.less, field("pages"), int(5))]))
        let closed = 10...20
        let open = 10..<20
        #expect(
            complete(#Predicate { closed.contains($0.pages) })
                == .between(field("pages"), lower: int(10), upper: int(20)))
        #expect(
            complete(#Predicate { open.contains($0.pages) })
                == .and([.compare(.greaterOrEqual, field("pages"), int(10)), .compare(.less, field("pages"), int(20))]))
    }

    // MARK: - Partial translations

    @Test func untranslatableConjunctsAreLeftOut() {
        let translation = PredicateTranslator.translate(
            #Predicate<Book> { $0.pages > 3 && $0.displayTitle == "A" && $0.isRead })
        #expect(translation.node == .and([.compare(.greater, field("pages"), int(3)), field("isRead")]))
        #expect(!translation.isComplete)
        #expect(translation.untranslated.count == 1)
    }

    @Test func untranslatablePartsSinkOrAndNot() {
        let or = PredicateTranslator.translate(#Predicate<Book> { $0.pages > 3 || $0.displayTitle == "A" })
        #expect(or.node == nil)
        #expect(!or.isComplete)
        let not = PredicateTranslator.translate(#Predicate<Book> { !($0.pages > 3 && $0.displayTitle == "A") })
        #expect(not.node == nil)
        let mixed = PredicateTranslator.translate(
            #Predicate<Book> { $0.isRead && ($0.pages > 3 || $0.tags.first == "x") })
        #expect(mixed.node == field("isRead"))
        #expect(mixed.untranslated.count == 1)
    }

    @Test func unsupportedExpressionsAreRefused() {
        let place = PredicatePlace(city: "a", zip: nil)
        #expect(PredicateTranslator.translate(#Predicate<Book> { $0.place == place }).node == nil)
        #expect(PredicateTranslator.translate(#Predicate<Book> { $0.tags.max() == "x" }).node == nil)
        #expect(PredicateTranslator.translate(#Predicate<Book> { $0.tags.first == "x" }).node == nil)
        #expect(PredicateTranslator.translate(#Predicate<Book> { $0.tags[0] == "x" }).node == nil)
    }

    @Test func emptyPredicateIsComplete() {
        let translation = PredicateTranslator.translate(#Predicate<Book> { _ in true })
        #expect(translation.node == .literal(.bool(true)))
        #expect(translation.isComplete)
    }
}
