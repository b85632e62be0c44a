import Foundation
import RillTestSupport
import RillWorkloads
import Testing

@testable import Rill

/// The string tests Rill supplies to `#Predicate` on Linux (`localizedStandardContains`,
/// `caseInsensitiveCompare`) against the `String` methods of the same name, on random accented,
/// mixed-case and empty strings: evaluated by Swift, through their translation, in a fetch, and as
/// the text query language's `contains[cd]`.
@Suite struct SuppliedStringTestsOracleTests {
    /// Pieces that fold in interesting ways: precomposed and decomposed accents, ligatures, the
    /// sharp s, dotted and dotless i, final sigma, full-width letters, combining marks alone.
    private static let pieces = [
        "a", "A", "e", "E", "é", "É", "e\u{301}", "E\u{301}", "è", "ß", "ss", "SS", "ﬁ", "fi", "İ", "i", "I", "ı",
        "Å", "A\u{30A}", "å", "ö", "o\u{308}", "Ö", "σ", "Σ", "ς", "Ａ", "\u{301}", " ", "c", "C", "Caf", "ç", "-",
        "z", "Z", "ǅ", "ǆ", "Ǆ",
    ]

    private static func string(_ random: inout SeededGenerator) -> String {
        (0..<Int.random(in: 0...4, using: &random)).map { _ in pieces.randomElement(using: &random)! }.joined()
    }

    @Test func builtinsAnswerAsTheStringMethods() throws {
        var random = SeededGenerator(label: "supplied string tests")
        let texts = (0..<400).map { _ in Self.string(&random) } + ["", "Café", "CAFE", "Cafe\u{301}"]
        let patterns = (0..<60).map { _ in Self.string(&random) } + ["", "cafe", "\u{301}", "ﬁ"]
        var failures: [String] = []
        var found = 0
        let orders: [ComparisonResult] = [.orderedAscending, .orderedSame, .orderedDescending]
        for pattern in patterns {
            let contains = #Predicate<Book> { $0.title.localizedStandardContains(pattern) }
            let fieldInField = #Predicate<Book> { $0.title.localizedStandardContains($0.author) }
            let translation = PredicateTranslator.translate(contains)
            let fieldTranslation = PredicateTranslator.translate(fieldInField)
            #expect(translation.isComplete && fieldTranslation.isComplete)
            for text in texts {
                let book = Book(title: text, author: pattern)
                let record = try RecordCoder.encode(book).withUnsafeBytes { try RecordValue(record: $0) }
                let expected = text.localizedStandardContains(pattern)
                if expected { found += 1 }
                let swift = try contains.evaluate(book)
                let translated = translation.node.map { QueryEvaluator.matches($0, record) }
                let fields = fieldTranslation.node.map { QueryEvaluator.matches($0, record) }
                let fieldsSwift = try fieldInField.evaluate(book)
                if swift != expected || translated != expected || fields != expected || fieldsSwift != expected {
                    failures.append(
                        "\(text.debugDescription).localizedStandardContains(\(pattern.debugDescription)) is \(expected); "
                            + "predicate \(swift), translated \(translated.map(String.init) ?? "-"), fields \(fields.map(String.init) ?? "-")"
                    )
                }
                let order = text.caseInsensitiveCompare(pattern)
                for wanted in orders {
                    let compares = #Predicate<Book> { $0.title.caseInsensitiveCompare(pattern) == wanted }
                    if try compares.evaluate(book) != (order == wanted) {
                        failures.append(
                            "\(text.debugDescription).caseInsensitiveCompare(\(pattern.debugDescription)) is \(order.rawValue)"
                        )
                    }
                }
            }
        }
        #expect(found > 100, "too few texts contain their pattern for the oracle to mean much: \(found)")
        #expect(failures.isEmpty, "seed \(random.seed): \(failures.count) disagreements, first: \(failures.prefix(5))")
    }

    @Test func fetchesAndTextQueriesAnswerAsTheStringMethods() throws {
        var random = SeededGenerator(label: "supplied string tests in a store")
        let directory = TemporaryDirectory()
        let container = try ModelContainer(
            for: Book.self, configurations: ModelConfiguration(url: directory.url.appendingPathComponent("store")))
        let context = container.mainContext
        var books: [Book] = []
        for _ in 0..<300 {
            let book = Book(title: Self.string(&random), author: Self.string(&random))
            books.append(book)
            context.insert(book)
        }
        try context.save()
        let ascending = ComparisonResult.orderedAscending
        var failures: [String] = []
        func check(_ what: String, _ got: some Sequence<UUID>, _ expected: [Book]) {
            let got = Set(got)
            let wanted = Set(expected.map(\.id))
            guard got != wanted else { return }
            let wrong = books.filter { got.contains($0.id) != wanted.contains($0.id) }.prefix(3)
            failures.append("\(what): \(got.count) rows, expected \(wanted.count); differ on \(wrong.map(\.title))")
        }
        for _ in 0..<40 {
            let pattern = Self.string(&random)
            let contains = try context.fetch(
                FetchDescriptor<Book>(predicate: #Predicate { $0.title.localizedStandardContains(pattern) }))
            let expected = books.filter { $0.title.localizedStandardContains(pattern) }
            check("fetch localizedStandardContains(\(pattern.debugDescription))", contains.map(\.id), expected)

            let before = try context.fetch(
                FetchDescriptor<Book>(predicate: #Predicate { $0.title.caseInsensitiveCompare(pattern) == ascending }))
            let expectedBefore = books.filter { $0.title.caseInsensitiveCompare(pattern) == .orderedAscending }
            check("fetch caseInsensitiveCompare(\(pattern.debugDescription))", before.map(\.id), expectedBefore)

            let literal = pattern.replacingOccurrences(of: "\\", with: "\\\\")
                .replacingOccurrences(of: "\"", with: "\\\"")
            let rows = try container.store.run(QueryParser.parse("Book where title contains[cd] \"\(literal)\""))
            let ids = rows.map { row in row.key.withUnsafeBytes { UUID(storageKey: $0)! } }
            check("contains[cd] \(pattern.debugDescription)", ids, expected)
        }
        #expect(failures.isEmpty, "seed \(random.seed): \(failures.count) disagreements, first: \(failures.prefix(3))")
    }
}
