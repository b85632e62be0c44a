import Foundation
import RillTestSupport
import Testing

@testable import Rill

/// `QueryValidator` on parsed queries and a known shape: which paths name no field, which
/// comparisons can never hold, at which column; and what it leaves alone.
@Suite struct QueryValidatorTests {
    /// A Book with a field of every kind, a nested struct, arrays, an empty object and an unknown field.
    static let shape: RecordShape = {
        let description = """
            {"id":"int","title":"string","pages":"int","price":"double","cost":"decimal","done":"bool",
             "ref":"uuid","link":"url","blob":"data","published":"date",
             "address":{"city":"string","street":"string"},"tags":["string"],
             "items":[{"name":"string","price":"double"}],"extra":{},"notes":"any"}
            """
        return RecordShape(json: try! JSONReader.parse(Array(description.utf8)))!
    }()

    func problems(_ text: String, shape: RecordShape = Self.shape) throws -> [QueryProblem] {
        QueryValidator.problems(in: try QueryParser.parse(text), shape: shape)
    }

    /// The 1-based column of the `occurrence`-th `word` in `text`.
    func column(of word: String, in text: String, occurrence: Int = 1) -> Int {
        var start = text.startIndex
        var found = text.startIndex
        for _ in 0..<occurrence {
            found = text.range(of: word, range: start..<text.endIndex)!.lowerBound
            start = text.index(after: found)
        }
        return text.distance(from: text.startIndex, to: found) + 1
    }

    @Test func unknownFieldsAreNamedWithTheirColumnAndTheClosestField() throws {
        let cases: [(query: String, word: String, message: String)] = [
            (#"Book where titel == "Emma""#, "titel", #"Book has no field "titel" (did you mean title? it has: id,"#),
            ("Book sort by pagse desc", "pagse", #"Book has no field "pagse" (did you mean pages?"#),
            ("Book sort by title, priorty", "priorty", #"Book has no field "priorty" (it has: id, title,"#),
            (#"Book where title == "a" or Title == "b""#, "Title", "did you mean title?"),
            (#"Book where address.cty == "Bath""#, "address", #"Book.address has no field "cty" (did you mean city?"#),
            ("Book where title.length > 3", "title", #"Book.title is a string and has no field "length""#),
            ("Book where any items ($.prise > 1)", "$", #"an element of Book.items has no field "prise" (did"#),
            (#"Book where any items.nme == "a""#, "items", #"Book.items has no field "nme" (did you mean name?"#),
            ("Book where count(tgas) > 1", "tgas", #"Book has no field "tgas" (did you mean tags?"#),
        ]
        for (query, word, message) in cases {
            let found = try problems(query)
            #expect(found.count == 1, "\(query): \(found.map(\.message))")
            #expect(found.first?.code == .unknownField, "\(query)")
            #expect(found.first?.message.contains(message) == true, "\(query): \(found.first?.message ?? "")")
            #expect(found.first?.column == column(of: word, in: query), "\(query)")
        }
    }

    @Test func kindMismatchesAreReportedWhereTheComparisonCanNeverHold() throws {
        let cases: [(query: String, word: String, message: String)] = [
            (
                #"Book where pages > "100""#, "pages",
                #"Book.pages is a number, and "100" is a string: they never compare (write 100 without quotes)"#
            ),
            (
                #"Book where done == "false""#, "done",
                #"Book.done is a Bool, and "false" is a string: they never compare (write false without quotes)"#
            ),
            (
                "Book where title == 5", "title",
                #"Book.title is a string, and 5 is a number: they never compare (write "5" in quotes)"#
            ),
            (#"Book where published > "2020-01-01""#, "published", "Book.published is a date"),
            (#"Book where ref == "b1""#, "ref", "(it is not a UUID)"),
            (#"Book where tags == "new""#, "tags", "Book.tags is an array, and \"new\" is a string"),
            ("Book where address == 1", "address", "Book.address is an object"),
            (#"Book where blob == "x""#, "blob", "Book.blob is data"),
            ("Book where title", "title", "Book.title is a string, and true is a Bool"),
            ("Book where any tags == 5", "tags", "an element of Book.tags is a string, and 5 is a number"),
            ("Book where any items.name == 5", "items", "an element of Book.items.name is a string"),
            ("Book where any items ($.price == \"x\")", "$", "price of an element of Book.items is a number"),
            (#"Book where pages in [1, "2"]"#, "pages", "\"2\" is a string"),
            (#"Book where pages not between "a" and 5"#, "pages", "\"a\" is a string"),
            ("Book where title contains 5", "title", "contains tests strings, and 5 is a number"),
            (#"Book where pages contains[c] "4""#, "pages", "contains tests strings, and Book.pages is a number"),
            (#"Book where link beginswith "http""#, "link", "beginswith tests strings, and Book.link is a URL"),
            (
                #"Book where any title == "x""#, "title",
                "any reads the elements of an array, and Book.title is a string"
            ),
            (
                "Book where all address == 1", "address",
                "all reads the elements of an array, and Book.address is an object"
            ),
            ("Book where title * 2 > 3", "title", "arithmetic needs numbers, and Book.title is a string"),
            ("Book where -published > 3", "published", "arithmetic needs numbers, and Book.published is a date"),
            ("Book where count(pages) > 1", "pages", "Book.pages is a number"),
        ]
        for (query, word, message) in cases {
            let found = try problems(query)
            #expect(found.count == 1, "\(query): \(found.map(\.message))")
            #expect(found.first?.code == .kindMismatch, "\(query)")
            #expect(found.first?.message.contains(message) == true, "\(query): \(found.first?.message ?? "")")
            #expect(found.first?.column == column(of: word, in: query), "\(query)")
        }
    }

    @Test func aPathWrittenTwiceIsPlacedAtTheRightOne() throws {
        let query = #"Book where pages > 1 and (pages > "x" or titel == 1) sort by pages"#
        let found = try problems(query)
        #expect(found.map(\.code) == [.kindMismatch, .unknownField])
        #expect(found.map(\.column) == [column(of: "pages", in: query, occurrence: 2), column(of: "titel", in: query)])
    }

    @Test func comparisonsThatCanHoldAreLeftAlone() throws {
        for query in [
            "Book where pages > 300.5 and price == 3 and cost > 2 and price < 2.5",
            "Book where title == nil and pages != nil and tags == nil and address == nil",
            "Book where ref == 3F2504E0-4F89-11D3-9A0C-0305E82C3301",
            #"Book where ref == "3F2504E0-4F89-11D3-9A0C-0305E82C3301" or title == 3F2504E0-4F89-11D3-9A0C-0305E82C3301"#,
            #"Book where link == "http://x" and published > 2020-01-01 and done and not done"#,
            #"Book where any tags == "new" and all tags beginswith "n" and count(tags) > 1 and count(title) > 1"#,
            #"Book where any items ($.price > 1 and $.name like "a*") and any items.name == "a""#,
            #"Book where address.city in ["Bath", "Rome"] and address.street contains[cd] "x""#,
            "Book where notes.anything == 5 and notes > 1 and extra.whatever == 1",
            "Book where (price ?? 2.5) > 1 and pages * 2 - price > 3 and -pages < 0",
            "Book where title == pages",
            "Book sort by address.city desc, title, tags, items.name",
        ] {
            let found = try problems(query)
            #expect(found.isEmpty, "\(query): \(found.map(\.message))")
        }
    }

    @Test func aFieldComparedWithNilMayBeAnOptionalNoRecordHasSet() throws {
        // Optionals that are nil are not stored: a field only compared with nil may be one.
        for query in [
            "Book where rating == nil", "Book where nil != rating and address.zip == nil",
            "Book where any items ($.discount == nil) and edition in [nil, 2]",
        ] {
            let found = try problems(query)
            #expect(found.isEmpty, "\(query): \(found.map(\.message))")
        }
        // Anything else said of it is judged, and so is a field of a scalar.
        #expect(try problems("Book where rating == nil or rating > 4").map(\.code) == [.unknownField])
        #expect(try problems("Book where title.length == nil").map(\.code) == [.unknownField])
    }

    @Test func nothingIsJudgedWhereNothingIsKnown() throws {
        // An entity with no records and no description: any field may be meant.
        #expect(try problems(#"Book where titel == 5 and any x ($.y > "z") sort by priorty"#, shape: .any).isEmpty)
        // What the query alone shows still is: a string test of a number never holds.
        #expect(try problems("Book where title contains 5", shape: .any).map(\.code) == [.kindMismatch])
    }

    @Test func aQueryBuiltInCodeNamesTheFieldWithoutAColumn() throws {
        let query = Query(entity: "Book", predicate: .compare(.equal, .field(["titel"]), .literal(.string("x"))))
        let found = QueryValidator.problems(in: query, shape: Self.shape)
        #expect(found.count == 1)
        #expect(found.first?.column == nil)
        let error = try #require(found.first?.error(in: nil))
        #expect(error.code == .unknownField)
        #expect(error.message.hasPrefix(#"Book has no field "titel""#))
        #expect(error.underlyingError == nil)

        let parsed = try QueryParser.parse(#"Book where titel == "x""#)
        let located = try #require(
            QueryValidator.problems(in: parsed, shape: Self.shape).first?.error(in: parsed.source))
        #expect(located.message.hasPrefix("column 12: "))
        let caret = try #require(located.underlyingError as? QueryParseError)
        #expect(caret.column == 12)
        #expect(caret.description.hasSuffix("\n" + String(repeating: " ", count: 11) + "^"))
    }

    @Test func aRecordHoldingTheFieldOrAComparableValueDisprovesTheProblem() throws {
        func record(_ json: String) throws -> RecordValue { try JSONReader.parse(Array(json.utf8)) }
        let cases: [(query: String, disproving: [String], notDisproving: [String])] = [
            (#"Book where titel == "x""#, [#"{"titel":"x"}"#, #"{"titel":null}"#], [#"{"title":"x"}"#, "{}"]),
            (#"Book where pages > "100""#, [#"{"pages":"abc"}"#], [#"{"pages":5}"#, #"{"pages":null}"#, "{}"]),
            (
                "Book where any items ($.prise > 1)", [#"{"items":[{"price":1},{"prise":2}]}"#],
                [#"{"items":[{"price":2}]}"#, #"{"items":{"prise":2}}"#]
            ),
            ("Book where any tags == 5", [#"{"tags":["a",5]}"#], [#"{"tags":["a"]}"#, #"{"tags":5}"#]),
            (#"Book where any title == "x""#, [#"{"title":["x"]}"#], [#"{"title":"x"}"#]),
            ("Book where address.cty == 1", [#"{"address":{"cty":1}}"#], [#"{"address":{"city":1}}"#]),
            ("Book where title * 2 > 1", [#"{"title":2.5}"#], [#"{"title":"2"}"#]),
        ]
        for (query, disproving, notDisproving) in cases {
            let problem = try #require(try problems(query).first, "\(query)")
            for json in disproving {
                #expect(problem.isRefuted(by: try record(json)), "\(query) by \(json)")
            }
            for json in notDisproving {
                #expect(!problem.isRefuted(by: try record(json)), "\(query) by \(json)")
            }
        }
    }
}
