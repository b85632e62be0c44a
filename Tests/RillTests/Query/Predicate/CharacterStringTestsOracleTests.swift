import Foundation
import RillTestSupport
import RillWorkloads
import Testing

@testable import Rill

/// `contains` compares `Character`s, as a `#Predicate` evaluated by Foundation does (Swift's
/// `Collection.contains(_:)`): "a\r\nb" does not contain "\r", "🇫🇷" does not contain "🇫". And no
/// text or pattern crashes a query, NUL included (Foundation's `range(of:options:)` traps on some
/// patterns that hold one). Checked against Foundation's own evaluation of the same predicate, in
/// a fetch, through the translation, and in the text query language.
@Suite struct CharacterStringTestsOracleTests {
    let directory = TemporaryDirectory()

    /// Pieces whose `Character`s and Unicode scalars disagree, and NUL.
    private static let pieces = [
        "a", "b", "A", "\r\n", "\r", "\n", "🇫🇷", "🇫", "🇷", "e", "é", "e\u{301}", "\u{301}", "\0", "Å",
        "\u{212B}", "A\u{30A}", "x", " ", "É",
    ]

    private static func string(_ random: inout SeededGenerator) -> String {
        (0..<Int.random(in: 0...4, using: &random)).map { _ in pieces.randomElement(using: &random)! }.joined()
    }

    /// `text` as a string literal of the query language: every scalar escaped.
    private static func literal(_ text: String) -> String {
        "\"" + text.unicodeScalars.map { "\\u{\(String($0.value, radix: 16))}" }.joined() + "\""
    }

    @Test func containsComparesCharactersAsFoundationEvaluatesIt() throws {
        var random = SeededGenerator(label: "character contains")
        let container = try ModelContainer(
            for: Book.self, configurations: ModelConfiguration(url: directory.url.appendingPathComponent("store")))
        let context = ModelContext(container)
        var books = (0..<200).map { _ in Book(title: Self.string(&random), author: "") }
        books += ["a\r\nb", "🇫🇷", "cafe\u{301}", "é", "é\0", "x", "Å"].map { Book(title: $0, author: "") }
        for book in books { context.insert(book) }
        try context.save()
        let patterns =
            (0..<40).map { _ in Self.string(&random) } + ["\r", "\n", "🇫", "\u{301}", "é\0", "é", "x\0", "\0", ""]
        var failures: [String] = []
        for pattern in patterns {
            let predicate = #Predicate<Book> { $0.title.contains(pattern) }
            let expected = try Set(books.filter { try predicate.evaluate($0) }.map(\.id))
            let fetched = Set(try context.fetch(FetchDescriptor(predicate: predicate)).map(\.id))
            let translation = PredicateTranslator.translate(predicate)
            #expect(translation.isComplete)
            var translated: Set<UUID> = []
            for book in books {
                let record = try RecordCoder.encode(book).withUnsafeBytes { try RecordValue(record: $0) }
                if translation.node.map({ QueryEvaluator.matches($0, record) }) == true { translated.insert(book.id) }
            }
            let text = try container.store.run(QueryParser.parse("Book where title contains \(Self.literal(pattern))"))
            let queried = Set(text.compactMap { row in books.first { $0.id.storageKey == row.key }?.id })
            if fetched != expected || translated != expected || queried != expected {
                failures.append(
                    "contains(\(pattern.debugDescription)): Foundation \(expected.count), fetch \(fetched.count), "
                        + "translation \(translated.count), text \(queried.count)")
            }
            // The pattern as the stored value: `searched.contains($0.title)`.
            let searched = pattern
            let reversed = #Predicate<Book> { searched.contains($0.title) }
            let reversedExpected = try Set(books.filter { try reversed.evaluate($0) }.map(\.id))
            let reversedFetched = Set(try context.fetch(FetchDescriptor(predicate: reversed)).map(\.id))
            if reversedFetched != reversedExpected {
                failures.append("\(pattern.debugDescription).contains(title): fetch differs from Foundation")
            }
        }
        #expect(failures.isEmpty, "\(failures.prefix(10))")
    }

    /// Searches with options (`contains[c]`, `localizedStandardContains`) of text or patterns
    /// holding NUL answer without trapping: both folded as the options ask, then compared
    /// `Character` by `Character`.
    @Test func searchesWithOptionsOfTextHoldingNULDoNotTrap() throws {
        let cases: [(text: String, pattern: String, found: Bool)] = [
            ("é", "é\0", false), ("é\0", "é", true), ("Å", "Å\0", false), ("\u{212B}", "Å\0", false),
            ("xÅ", "Å\0", false), ("x", "x\0", false), ("É\0z", "é\0", true), ("a\0b", "B", true), ("\0", "\0", true),
        ]
        for (text, pattern, found) in cases {
            #expect(StringMatching.localizedStandardContains(text, pattern) == found, "\(text.debugDescription)")
            #expect(StringMatching.matches(.contains, text, pattern, [.caseInsensitive]) == found)
            let prefix = text.folding(options: [.caseInsensitive], locale: nil).hasPrefix(
                pattern.folding(options: [.caseInsensitive], locale: nil))
            #expect(StringMatching.matches(.beginsWith, text, pattern, [.caseInsensitive]) == prefix)
            let book = Book(title: text, author: pattern)
            let predicate = #Predicate<Book> { $0.title.localizedStandardContains($0.author) }
            #expect(try predicate.evaluate(book) == found)
        }
        let container = try ModelContainer(
            for: Book.self, configurations: ModelConfiguration(url: directory.url.appendingPathComponent("nul")))
        let context = ModelContext(container)
        for (text, _, _) in cases { context.insert(Book(title: text, author: "")) }
        try context.save()
        for (_, pattern, _) in cases {
            let expected = cases.filter { StringMatching.localizedStandardContains($0.text, pattern) }.count
            let fetched = try context.fetch(
                FetchDescriptor(predicate: #Predicate<Book> { $0.title.localizedStandardContains(pattern) }))
            #expect(fetched.count == expected, "\(pattern.debugDescription)")
            let text = try container.store.run(
                QueryParser.parse("Book where title contains[cd] \(Self.literal(pattern))"))
            #expect(text.count == expected, "\(pattern.debugDescription)")
        }
    }
}
