import Foundation
import RillWorkloads
import Testing

@testable import Rill

/// Plain ASCII query text is read from its bytes (`QueryText.plainASCII`): its characters made
/// from them, and the source text of tokens quoted in messages cut from them. Reading the same
/// text through its characters, as any other text is read, must give the same query, or the same
/// error at the same column: random text made of the language's pieces, valid and broken, is
/// parsed both ways. (How each character is told apart is the same code either way, checked by
/// `QueryParserTests`.)
@Suite struct PlainASCIIQueryTextTests {
    static let pieces = [
        "Book", "where", "and", "or", "not", "x", "_a1", "title", "address.city", "`limit`", "`a b`", "``", "`",
        "==", "=", "!=", "<>", "<", "<=", ">", ">=", "&&", "||", "!", "??", "+", "-", "*", "/", "%", "(", ")",
        "[", "]", ",", ".", "$", "$.x", "42", "-7", "3.5", "1e3", "1e", "12ab", "9223372036854775808", "1e999",
        "\"s\"", "'t'", #""a\"b""#, #""\u{41}""#, #""\u{zz}""#, #""\q""#, "\"unterminated", "2024-05-01",
        "2024-05-01T10:30:00Z", "2024-05-01T10:30+02:00", "2024-13-01", "3F2504E0-4F89-11D3-9A0C-0305E82C3301",
        "3f2504e0-4f89-11d3-9a0c-0305e82c330", "in", "between", "contains", "contains[cd]", "beginswith", "endswith",
        "like", "any", "all", "sort by", "asc", "desc", "limit", "offset", "nil", "null", "true", "false", "count(",
        "#", "@", "~", "\\", "^", "{", "}", ";", "\t", "\n", " ",
    ]

    @Test func plainASCIIParsesAsTheCharactersDo() throws {
        var generator = SeededGenerator(label: "plain ASCII query text")
        print("PlainASCIIQueryTextTests seed \(generator.seed)")
        var texts = [
            "Book", "Book where code == 12345", "Entry where amount > 99990.0 sort by amount desc limit 20 offset 3",
            "Book where title contains[cd] \"harry\" and pages between 100 and 300 or not isRead",
            "Book where any tags ($.name == \"x\" and $.count > 2)", "Book where x in [1, 2.5, \"a\", nil]",
        ]
        for _ in 0..<4_000 {
            var text = Bool.random(using: &generator) ? "Book where " : ""
            for _ in 0..<Int.random(in: 1...10, using: &generator) {
                text += Self.pieces.randomElement(using: &generator)!
                if Int.random(in: 0..<4, using: &generator) != 0 { text += " " }
            }
            texts.append(text)
        }
        // Queries built to be valid, mostly: conditions joined, sorted and windowed.
        let paths = ["x", "title", "address.city", "`limit`", "_a1", "$.y"]
        let operators = ["==", "=", "!=", "<>", "<", "<=", ">", ">=", "contains", "contains[cd]", "beginswith", "like"]
        let values = [
            "42", "-7", "3.5", "1e3", "\"s\"", "'t'", #""a\"b""#, "2024-05-01", "2024-05-01T10:30:00.250Z",
            "3F2504E0-4F89-11D3-9A0C-0305E82C3301", "nil", "true", "x + 1 * 2", "count(tags)", "(y ?? 3)",
        ]
        let joins = [" and ", " or ", " && ", " || ", " and not "]
        for _ in 0..<2_000 {
            var text = "Book where "
            for index in 0..<Int.random(in: 1...4, using: &generator) {
                if index > 0 { text += joins.randomElement(using: &generator)! }
                text += paths.randomElement(using: &generator)! + " " + operators.randomElement(using: &generator)!
                text += " " + values.randomElement(using: &generator)!
            }
            if Bool.random(using: &generator) { text += " sort by title desc, x" }
            if Bool.random(using: &generator) { text += " limit \(Int.random(in: 0...99, using: &generator))" }
            texts.append(text)
        }
        var parsed = 0
        for text in texts {
            #expect(QueryText.plainASCII(text) != nil, "\(text) is plain ASCII")
            let bytes = Self.outcome(text, readsBytes: true)
            let characters = Self.outcome(text, readsBytes: false)
            #expect(bytes == characters, "\(text)")
            if case .success = bytes { parsed += 1 }
        }
        // The pieces must make valid queries too, not only errors.
        #expect(parsed > 1_000)
    }

    @Test func textThatIsNotPlainASCIIWalksItsCharacters() {
        for text in ["Book where t == \"é\"", "Book where a == 1\r\n", "Böök", "Book where `naïve` > 2"] {
            #expect(QueryText.plainASCII(text) == nil)
        }
        #expect(QueryText.plainASCII("Book where a == 1\n") == Array("Book where a == 1\n".utf8))
    }

    private static func outcome(_ text: String, readsBytes: Bool) -> Result<Query, QueryParseError> {
        do {
            let parser = try QueryParserState(text, readsBytes: readsBytes)
            return .success(try parser.parseQuery())
        } catch {
            return .failure(error)
        }
    }
}
