import Foundation
import Testing

@testable import Rill

/// A parsed query printed as text (`Query.text`, `QueryNode.description`) parses back to an
/// equal query: the groups the parser keeps keep their parentheses, a minus before a
/// parenthesized number stays apart from it, dates keep every digit, and strings escape what
/// would join their quotes. The fuzzing target `query-parser` checks the same on random text.
@Suite struct QueryTextTests {
    @Test(arguments: [
        ("Book where (a and b) and c", "Book where (a == true and b == true) and c == true"),
        ("Book where a or (b or c)", "Book where a == true or (b == true or c == true)"),
        ("Book where x == -(5)", "Book where x == -(5)"),
        ("Book where x == - -5", "Book where x == --5"),
        ("Book where count(a ?? b) > 1", "Book where count(a ?? b) > 1"),
        ("Book where x in [(a == 1), 2]", "Book where x in [(a == 1), 2]"),
        ("Book where d == 2024-05-01T10:30:00.123456Z", "Book where d == 2024-05-01T10:30:00.123456Z"),
        (
            #"Book where s == "\u{301}x\u{600}" sort by `limit` desc limit 2"#,
            #"Book where s == "\u{301}x\u{600}" sort by `limit` desc limit 2"#
        ),
        (#"Book where s == "a\rb\0""#, #"Book where s == "a\rb\0""#),
    ])
    func printedQueriesParseBack(_ text: String, _ printed: String) throws {
        let query = try QueryParser.parse(text)
        #expect(query.text == printed)
        #expect(try QueryParser.parse(query.text) == query)
    }

    @Test func everyDocumentedKindOfQueryPrintsAndParsesBack() throws {
        for text in [
            "Book",
            "Book where isRead == false and pages > 300 and title contains[cd] \"harry\" sort by author, title desc "
                + "limit 20 offset 40",
            "Recipe where any ingredients ($.price > 10 and $.stock == 0) or not (tags in [1, 2.5, -3e2, nil])",
            "Item where all tags endswith \"z\" and any tags not in [1] and x not between 1 and 2",
            "Item where (a - (b - c)) * -d % 3 >= (a ?? b) ?? 4 and !(x like[c] 'a*?')",
            "Item where id == 3F2504E0-4F89-11D3-9A0C-0305E82C3301 or d < 2024-05-01T10:30+02:00",
        ] {
            let query = try QueryParser.parse(text)
            #expect(try QueryParser.parse(query.text) == query, "\(text) printed as \(query.text)")
        }
    }
}
