import Foundation
import RillLocks
import RillTestSupport
import RillWorkloads
import Testing

@testable import Rill

private func field(_ path: String...) -> QueryNode { .field(path) }
private func element(_ path: String...) -> QueryNode { .element(path) }
private func int(_ value: Int64) -> QueryNode { .literal(.int(value)) }
private func double(_ value: Double) -> QueryNode { .literal(.double(value)) }
private func string(_ value: String) -> QueryNode { .literal(.string(value)) }
private func bool(_ value: Bool) -> QueryNode { .literal(.bool(value)) }
private let null = QueryNode.literal(.null)
private func isTrue(_ path: String...) -> QueryNode { .compare(.equal, .field(path), bool(true)) }
private func date(_ secondsSince1970: Int, plus fraction: Double = 0) -> QueryNode {
    .literal(.date(Date(timeIntervalSinceReferenceDate: Double(secondsSince1970 - 978_307_200) + fraction)))
}
private let both: QueryStringOptions = [.caseInsensitive, .diacriticInsensitive]

private func parseError(_ text: String, predicateOnly: Bool = false) -> QueryParseError? {
    do {
        if predicateOnly {
            _ = try QueryParser.parsePredicate(text)
        } else {
            _ = try QueryParser.parse(text)
        }
        return nil
    } catch {
        return error
    }
}

/// Values collected on another thread.
private final class Results: @unchecked Sendable {
    private let lock = NSLock()
    private var collected: [String?] = []

    func append(_ value: String?) { lock.withLock { collected.append(value) } }
    var values: [String?] { lock.withLock { collected } }
}

@Suite struct QueryParserTests {
    func predicate(_ text: String) throws -> QueryNode {
        try QueryParser.parsePredicate(text)
    }

    @Test func aStringMayStartWithACombiningMark() throws {
        // `"` and U+0301 form one Character; the string is the mark and what follows it.
        #expect(
            try predicate("title contains[cd] \"\u{301}x\"")
                == .string(
                    .contains, .field(["title"]), .literal(.string("\u{301}x")),
                    [.caseInsensitive, .diacriticInsensitive]))
        #expect(
            try predicate("title == '\u{301}'") == .compare(.equal, .field(["title"]), .literal(.string("\u{301}"))))
        #expect(throws: QueryParseError.self) { try predicate("title == \"x\"\u{301}") }
    }

    // MARK: - Whole queries

    @Test func entityAloneSelectsEverything() throws {
        #expect(try QueryParser.parse("Book") == Query(entity: "Book"))
        #expect(try QueryParser.parse("  Book  ") == Query(entity: "Book"))
        #expect(try QueryParser.parse("`Sort`") == Query(entity: "Sort"))
        #expect(try QueryParser.parse("Ünïcode_2") == Query(entity: "Ünïcode_2"))
    }

    @Test func theExampleQuery() throws {
        let query = try QueryParser.parse(
            #"Book where isRead == false and pages > 300 and title contains[cd] "harry" sort by author, title desc limit 20 offset 40"#
        )
        let expected = Query(
            entity: "Book",
            predicate: .and([
                .compare(.equal, field("isRead"), bool(false)),
                .compare(.greater, field("pages"), int(300)),
                .string(.contains, field("title"), string("harry"), both),
            ]),
            sort: [QuerySortKey(path: ["author"], ascending: true), QuerySortKey(path: ["title"], ascending: false)],
            limit: 20,
            offset: 40
        )
        #expect(query == expected)
    }

    @Test func sortLimitAndOffset() throws {
        #expect(
            try QueryParser.parse("Book sort by author asc, address.city desc, title")
                == Query(
                    entity: "Book",
                    sort: [
                        QuerySortKey(path: ["author"]), QuerySortKey(path: ["address", "city"], ascending: false),
                        QuerySortKey(path: ["title"]),
                    ]))
        #expect(try QueryParser.parse("Book offset 5 limit 10") == Query(entity: "Book", limit: 10, offset: 5))
        #expect(try QueryParser.parse("Book limit 0") == Query(entity: "Book", limit: 0))
        #expect(try QueryParser.parse("Book offset 0") == Query(entity: "Book", offset: 0))
        #expect(
            try QueryParser.parse("Book limit 3 sort by `desc` desc")
                == Query(entity: "Book", sort: [QuerySortKey(path: ["desc"], ascending: false)], limit: 3))
        #expect(
            try QueryParser.parse("Book where pages > 1 limit 9223372036854775807")
                == Query(entity: "Book", predicate: .compare(.greater, field("pages"), int(1)), limit: Int.max))
    }

    @Test func keywordsAreCaseInsensitive() throws {
        let query = try QueryParser.parse(
            #"BOOK WHERE Title CONTAINS[CD] "x" AnD NOT isRead Or pages BETWEEN 1 AND 2 SORT BY Title DESC LIMIT 1 OFFSET 2"#
        )
        let expected = Query(
            entity: "BOOK",
            predicate: .or([
                .and([
                    .string(.contains, field("Title"), string("x"), both),
                    .not(isTrue("isRead")),
                ]),
                .between(field("pages"), lower: int(1), upper: int(2)),
            ]),
            sort: [QuerySortKey(path: ["Title"], ascending: false)],
            limit: 1,
            offset: 2
        )
        #expect(query == expected)
        #expect(
            try predicate("a == TRUE or b == False or c == NIL or d == Null")
                == .or([
                    .compare(.equal, field("a"), bool(true)),
                    .compare(.equal, field("b"), bool(false)),
                    .compare(.equal, field("c"), null),
                    .compare(.equal, field("d"), null),
                ]))
        #expect(
            try predicate("ANY tags IN [1] and ALL tags NOT LIKE 'x'")
                == .and([
                    .any(field("tags"), body: .isIn(element(), [int(1)])),
                    .all(field("tags"), body: .not(.string(.like, element(), string("x"), []))),
                ]))
        #expect(try predicate("COUNT(tags) > 1") == .compare(.greater, .count(field("tags")), int(1)))
    }

    // MARK: - Paths

    @Test func paths() throws {
        #expect(try predicate("address.city == 'Paris'") == .compare(.equal, field("address", "city"), string("Paris")))
        #expect(try predicate("a.b.c_1 == _x") == .compare(.equal, field("a", "b", "c_1"), field("_x")))
        #expect(try predicate("café == 1") == .compare(.equal, field("café"), int(1)))
        #expect(try predicate("address . city == 1") == .compare(.equal, field("address", "city"), int(1)))
    }

    @Test func backtickedNames() throws {
        #expect(try predicate("`limit` == 5") == .compare(.equal, field("limit"), int(5)))
        #expect(try predicate("`where`.`sort` > 1") == .compare(.greater, field("where", "sort"), int(1)))
        #expect(try predicate("release.limit == 2") == .compare(.equal, field("release", "limit"), int(2)))
        #expect(try predicate("`first name` == 'Ann'") == .compare(.equal, field("first name"), string("Ann")))
        #expect(try predicate("`true`") == isTrue("true"))
        #expect(
            try QueryParser.parse("Book sort by `asc` desc, `by`")
                == Query(
                    entity: "Book",
                    sort: [QuerySortKey(path: ["asc"], ascending: false), QuerySortKey(path: ["by"])]))
    }

    // MARK: - Literals

    @Test func strings() throws {
        #expect(try predicate(#"s == "double""#) == .compare(.equal, field("s"), string("double")))
        #expect(try predicate("s == 'single'") == .compare(.equal, field("s"), string("single")))
        #expect(
            try predicate(#"s == "" or s == ''"#)
                == .or([
                    .compare(.equal, field("s"), string("")), .compare(.equal, field("s"), string("")),
                ]))
        #expect(
            try predicate(#"s == "say \"hi\" \\ it's""#) == .compare(.equal, field("s"), string(#"say "hi" \ it's"#)))
        #expect(try predicate(#"s == 'it\'s "fine"'"#) == .compare(.equal, field("s"), string(#"it's "fine""#)))
        #expect(try predicate(#"s == "a\nb\tc\rd\0""#) == .compare(.equal, field("s"), string("a\nb\tc\rd\0")))
        #expect(try predicate(#"s == "\u{1F600}\u{e9}\u{41}""#) == .compare(.equal, field("s"), string("😀éA")))
    }

    @Test func unicodeInStrings() throws {
        let text = "日本語 🙂 café 👨‍👩‍👧 e\u{301}"
        #expect(try predicate("title == \"\(text)\"") == .compare(.equal, field("title"), string(text)))
        #expect(
            try predicate("title contains[d] 'Ελληνικά'")
                == .string(.contains, field("title"), string("Ελληνικά"), .diacriticInsensitive))
        // Columns count Characters: the emoji and the accented letter are one column each.
        let error = parseError("B where t == '🙂é' and")
        #expect(error?.column == 22)
        #expect(error?.message == "expected a condition after and")
    }

    @Test func integersAndDecimals() throws {
        let cases: [(String, QueryNode)] = [
            ("42", int(42)),
            ("-7", int(-7)),
            ("- 7", int(-7)),
            ("0", int(0)),
            ("007", int(7)),
            ("3.5", double(3.5)),
            ("-0.25", double(-0.25)),
            ("1e3", double(1000)),
            ("1E3", double(1000)),
            ("2e+2", double(200)),
            ("1.5e-3", double(0.0015)),
            ("-2.5E2", double(-250)),
            ("9223372036854775807", int(.max)),
            ("-9223372036854775808", int(.min)),
            ("9223372036854775808", .literal(.uint(9_223_372_036_854_775_808))),
            ("18446744073709551615", .literal(.uint(.max))),
            ("18446744073709551616", double(18_446_744_073_709_551_616)),
            ("-9223372036854775809", double(-9_223_372_036_854_775_808)),
            ("99999999999999999999", double(1e20)),
            ("-99999999999999999999", double(-1e20)),
            ("--7", .negate(int(-7))),
            ("-(7)", .negate(int(7))),
            ("-x", .negate(field("x"))),
        ]
        for (text, value) in cases {
            #expect(try predicate("n == \(text)") == .compare(.equal, field("n"), value), "\(text)")
        }
        #expect(try predicate("-1 < n") == .compare(.less, int(-1), field("n")))
        #expect(try predicate("n in [-1, -2.5]") == .isIn(field("n"), [int(-1), double(-2.5)]))
    }

    @Test func booleansAndNull() throws {
        #expect(try predicate("a == true") == .compare(.equal, field("a"), bool(true)))
        #expect(try predicate("a != false") == .compare(.notEqual, field("a"), bool(false)))
        #expect(try predicate("a == nil") == .compare(.equal, field("a"), null))
        #expect(try predicate("a != null") == .compare(.notEqual, field("a"), null))
        #expect(try predicate("nil == a") == .compare(.equal, null, field("a")))
        #expect(try predicate("true") == bool(true))
        #expect(try predicate("(false)") == bool(false))
    }

    @Test func dates() throws {
        let may1 = 1_714_521_600
        let cases: [(String, QueryNode)] = [
            ("2024-05-01", date(may1)),
            ("2024-05-01T10:30:00Z", date(may1 + 37_800)),
            ("2024-05-01t10:30:00z", date(may1 + 37_800)),
            ("2024-05-01T10:30Z", date(may1 + 37_800)),
            ("2024-05-01T10:30:00", date(may1 + 37_800)),
            ("2024-05-01T10:30:00.5Z", date(may1 + 37_800, plus: 0.5)),
            ("2024-05-01T10:30:00.250Z", date(may1 + 37_800, plus: 0.25)),
            ("2024-05-01T10:30:00+02:00", date(may1 + 37_800 - 7_200)),
            ("2024-05-01T10:30:00+0200", date(may1 + 37_800 - 7_200)),
            ("2024-05-01T10:30:00-05:30", date(may1 + 37_800 + 19_800)),
            ("2024-05-01T10:30:00.125+01:00", date(may1 + 37_800 - 3_600, plus: 0.125)),
            ("2024-02-29", date(1_709_164_800)),
            ("2000-01-01", date(946_684_800)),
            ("1969-07-20T20:17:40Z", date(-14_182_940)),
        ]
        for (text, value) in cases {
            #expect(try predicate("d == \(text)") == .compare(.equal, field("d"), value), "\(text)")
        }
        // Agrees with Foundation's ISO-8601 parser.
        let formatter = ISO8601DateFormatter()
        for text in ["2024-05-01T10:30:00Z", "2023-12-31T23:59:59+05:45", "1999-03-01T00:00:00-08:00"] {
            let expected = try #require(formatter.date(from: text))
            #expect(try predicate("d == \(text)") == .compare(.equal, field("d"), .literal(.date(expected))))
        }
        #expect(
            try predicate("d between 2024-01-01 and 2024-12-31T23:59:59Z")
                == .between(field("d"), lower: date(1_704_067_200), upper: date(1_735_689_599)))
        #expect(
            try predicate("d in [2024-01-01,2000-01-01]")
                == .isIn(field("d"), [date(1_704_067_200), date(946_684_800)]))
    }

    @Test func uuids() throws {
        let upper = try #require(UUID(uuidString: "3F2504E0-4F89-11D3-9A0C-0305E82C3301"))
        #expect(
            try predicate("id == 3F2504E0-4F89-11D3-9A0C-0305E82C3301")
                == .compare(.equal, field("id"), .literal(.uuid(upper))))
        #expect(
            try predicate("id == 3f2504e0-4f89-11d3-9a0c-0305e82c3301")
                == .compare(.equal, field("id"), .literal(.uuid(upper))))
        let letters = try #require(UUID(uuidString: "DEADBEEF-0000-4000-8000-ABCDEFABCDEF"))
        #expect(
            try predicate("id in [DEADBEEF-0000-4000-8000-ABCDEFABCDEF, 3F2504E0-4F89-11D3-9A0C-0305E82C3301]")
                == .isIn(field("id"), [.literal(.uuid(letters)), .literal(.uuid(upper))]))
    }

    // MARK: - Comparisons and arithmetic

    @Test func comparisonOperators() throws {
        let cases: [(String, QueryComparison)] = [
            ("==", .equal), ("=", .equal), ("!=", .notEqual), ("<>", .notEqual), ("<", .less), ("<=", .lessOrEqual),
            (">", .greater), (">=", .greaterOrEqual),
        ]
        for (symbol, comparison) in cases {
            #expect(try predicate("a \(symbol) 1") == .compare(comparison, field("a"), int(1)), "\(symbol)")
            #expect(try predicate("a\(symbol)b") == .compare(comparison, field("a"), field("b")), "\(symbol)")
        }
    }

    @Test func arithmetic() throws {
        #expect(
            try predicate("a == 1 + 2 * 3")
                == .compare(.equal, field("a"), .arithmetic(.add, int(1), .arithmetic(.multiply, int(2), int(3)))))
        #expect(
            try predicate("(a + 2) * 3 > 4")
                == .compare(.greater, .arithmetic(.multiply, .arithmetic(.add, field("a"), int(2)), int(3)), int(4)))
        #expect(
            try predicate("a - b - c == 0")
                == .compare(
                    .equal, .arithmetic(.subtract, .arithmetic(.subtract, field("a"), field("b")), field("c")), int(0)))
        #expect(
            try predicate("a / b % c == 0")
                == .compare(
                    .equal, .arithmetic(.remainder, .arithmetic(.divide, field("a"), field("b")), field("c")), int(0)))
        #expect(
            try predicate("-a * 2 < a-1")
                == .compare(
                    .less, .arithmetic(.multiply, .negate(field("a")), int(2)),
                    .arithmetic(.subtract, field("a"), int(1))))
        #expect(try predicate("a -1 == 0") == .compare(.equal, .arithmetic(.subtract, field("a"), int(1)), int(0)))
        #expect(
            try predicate("price * 1.2 >= 10")
                == .compare(
                    .greaterOrEqual, .arithmetic(.multiply, field("price"), double(1.2)), int(10)))
    }

    @Test func coalesce() throws {
        #expect(
            try predicate("(plannedDate ?? 2024-01-01) > 2023-06-01")
                == .compare(
                    .greater, .coalesce(field("plannedDate"), date(1_704_067_200)), date(1_685_577_600)))
        #expect(
            try predicate("a ?? b ?? 0 > 1")
                == .compare(.greater, .coalesce(field("a"), .coalesce(field("b"), int(0))), int(1)))
        #expect(
            try predicate("a ?? b + 1 == 2")
                == .compare(.equal, .coalesce(field("a"), .arithmetic(.add, field("b"), int(1))), int(2)))
        #expect(try predicate("flag ?? false") == .coalesce(field("flag"), bool(false)))
    }

    @Test func count() throws {
        #expect(try predicate("count(tags) > 2") == .compare(.greater, .count(field("tags")), int(2)))
        #expect(
            try predicate("count( a.b ) + 1 == count(c)")
                == .compare(.equal, .arithmetic(.add, .count(field("a", "b")), int(1)), .count(field("c"))))
        #expect(try predicate("count == 3") == .compare(.equal, field("count"), int(3)))
    }

    // MARK: - Tests

    @Test func inLists() throws {
        #expect(
            try predicate(#"genre in ["sf", 'fantasy', 3, nil]"#)
                == .isIn(field("genre"), [string("sf"), string("fantasy"), int(3), null]))
        #expect(try predicate("genre in []") == .isIn(field("genre"), []))
        #expect(try predicate("genre not in [1]") == .not(.isIn(field("genre"), [int(1)])))
        #expect(
            try predicate("a + 1 in [b * 2]")
                == .isIn(
                    .arithmetic(.add, field("a"), int(1)),
                    [
                        .arithmetic(.multiply, field("b"), int(2))
                    ]))
    }

    @Test func between() throws {
        #expect(
            try predicate("pages between 100 and 200") == .between(field("pages"), lower: int(100), upper: int(200)))
        #expect(
            try predicate("pages between 1 and 5 and isRead")
                == .and([.between(field("pages"), lower: int(1), upper: int(5)), isTrue("isRead")]))
        #expect(
            try predicate("pages not between a - 1 && b")
                == .not(.between(field("pages"), lower: .arithmetic(.subtract, field("a"), int(1)), upper: field("b"))))
        #expect(
            try predicate("not pages between 1 and 2")
                == .not(.between(field("pages"), lower: int(1), upper: int(2))))
    }

    @Test func stringTests() throws {
        let tests: [(String, QueryStringTest)] = [
            ("contains", .contains), ("beginswith", .beginsWith), ("endswith", .endsWith), ("like", .like),
        ]
        let options: [(String, QueryStringOptions)] = [
            ("", []), ("[c]", .caseInsensitive), ("[d]", .diacriticInsensitive), ("[cd]", both), ("[dc]", both),
            ("[CD]", both), (" [c]", .caseInsensitive),
        ]
        for (word, test) in tests {
            for (written, set) in options {
                #expect(
                    try predicate("title \(word)\(written) \"x\"") == .string(test, field("title"), string("x"), set),
                    "\(word)\(written)")
                #expect(
                    try predicate("title not \(word)\(written) 'x'")
                        == .not(.string(test, field("title"), string("x"), set)),
                    "not \(word)\(written)")
            }
        }
        #expect(
            try predicate(#"title contains[cd] "harry""#)
                == .string(.contains, field("title"), string("harry"), [.caseInsensitive, .diacriticInsensitive]))
        #expect(try predicate(#"name like "J*n?""#) == .string(.like, field("name"), string("J*n?"), []))
        #expect(try predicate("title contains other") == .string(.contains, field("title"), field("other"), []))
    }

    @Test func quantifiers() throws {
        #expect(
            try predicate(#"any tags == "new""#)
                == .any(field("tags"), body: .compare(.equal, element(), string("new"))))
        #expect(
            try predicate(#"any ingredients.name contains[c] "salt""#)
                == .any(
                    field("ingredients", "name"),
                    body: .string(.contains, element(), string("salt"), .caseInsensitive)))
        #expect(
            try predicate("all scores >= 50")
                == .all(field("scores"), body: .compare(.greaterOrEqual, element(), int(50))))
        #expect(
            try predicate("all scores between 1 and 9")
                == .all(field("scores"), body: .between(element(), lower: int(1), upper: int(9))))
        #expect(
            try predicate("any tags in ['a', 'b']")
                == .any(field("tags"), body: .isIn(element(), [string("a"), string("b")])))
        #expect(
            try predicate("any tags not in ['a']") == .any(field("tags"), body: .not(.isIn(element(), [string("a")]))))
        #expect(
            try predicate("all tags not contains 'x'")
                == .all(field("tags"), body: .not(.string(.contains, element(), string("x"), []))))
        #expect(
            try predicate("not any tags == 'x' and count(tags) > 0")
                == .and([
                    .not(.any(field("tags"), body: .compare(.equal, element(), string("x")))),
                    .compare(.greater, .count(field("tags")), int(0)),
                ]))
        #expect(
            try predicate("any tags == 'a' or all tags == 'b'")
                == .or([
                    .any(field("tags"), body: .compare(.equal, element(), string("a"))),
                    .all(field("tags"), body: .compare(.equal, element(), string("b"))),
                ]))
    }

    @Test func quantifierBodiesInParentheses() throws {
        #expect(
            try predicate("any items ($.price > 10 and $.stock == 0)")
                == .any(
                    field("items"),
                    body: .and([
                        .compare(.greater, element("price"), int(10)),
                        .compare(.equal, element("stock"), int(0)),
                    ])))
        #expect(try predicate("all flags ($)") == .all(field("flags"), body: .compare(.equal, element(), bool(true))))
        #expect(
            try predicate("any shelves (any $.books == 'x')")
                == .any(
                    field("shelves"),
                    body: .any(element("books"), body: .compare(.equal, element(), string("x")))))
    }

    // MARK: - Boolean structure

    @Test func barePathsAreBooleanTests() throws {
        #expect(try predicate("isRead") == isTrue("isRead"))
        #expect(try predicate("not isRead") == .not(isTrue("isRead")))
        #expect(try predicate("!isRead") == .not(isTrue("isRead")))
        #expect(try predicate("a.b and c") == .and([isTrue("a", "b"), isTrue("c")]))
        #expect(try predicate("(isRead)") == isTrue("isRead"))
        #expect(try predicate("(isRead) == false") == .compare(.equal, field("isRead"), bool(false)))
        #expect(try QueryParser.parse("Book where isRead") == Query(entity: "Book", predicate: isTrue("isRead")))
    }

    @Test func precedence() throws {
        let a = isTrue("a")
        let b = isTrue("b")
        let c = isTrue("c")
        #expect(try predicate("a or b and c") == .or([a, .and([b, c])]))
        #expect(try predicate("a and b or c") == .or([.and([a, b]), c]))
        #expect(try predicate("not a and b") == .and([.not(a), b]))
        #expect(try predicate("not a or b") == .or([.not(a), b]))
        #expect(try predicate("not (a or b)") == .not(.or([a, b])))
        #expect(try predicate("(a or b) and c") == .and([.or([a, b]), c]))
        #expect(try predicate("a and b and c") == .and([a, b, c]))
        #expect(try predicate("a or b or c") == .or([a, b, c]))
        #expect(try predicate("a && b || !c") == .or([.and([a, b]), .not(c)]))
        #expect(try predicate("a and (b and c)") == .and([a, .and([b, c])]))
        #expect(try predicate("not not a") == .not(.not(a)))
        #expect(
            try predicate("not x == 1 and y == 2")
                == .and([.not(.compare(.equal, field("x"), int(1))), .compare(.equal, field("y"), int(2))]))
        #expect(
            try predicate("x == 1 and (y == 2 or z == 3)")
                == .and([
                    .compare(.equal, field("x"), int(1)),
                    .or([.compare(.equal, field("y"), int(2)), .compare(.equal, field("z"), int(3))]),
                ]))
        #expect(
            try predicate("((a))") == a)
        #expect(
            try predicate("(a > 1) == (b < 2)")
                == .compare(
                    .equal, .compare(.greater, field("a"), int(1)), .compare(.less, field("b"), int(2))))
    }

    @Test func documentedExamplesParse() throws {
        let queries = [
            "Book",
            "Book where pages > 300",
            #"Book where isRead == false and pages > 300 and title contains[cd] "harry" sort by author, title desc limit 20 offset 40"#,
            "Book where (plannedDate ?? 2024-01-01) > 2023-06-01",
            "Book where price * 1.2 >= 10",
            "Book where count(tags) > 2",
            #"Book where any tags == "new""#,
            #"Book where any ingredients.name contains[c] "salt""#,
            "Book where all scores between 1 and 9",
            #"Book where not any tags in ["old", "stale"]"#,
            "Book where any items ($.price > 10 and $.stock == 0)",
            #"Book where any shelves (any $.books == "Dune")"#,
            "Book where x between 1 and 5 and isRead",
        ]
        for text in queries {
            let query = try QueryParser.parse(text)
            #expect(query.entity == "Book")
            if let range = text.range(of: "where ") {
                let rest = String(text[range.upperBound...])
                if !rest.contains("sort by") {
                    #expect(try predicate(rest) == query.predicate, "\(text)")
                }
            }
        }
    }

    // MARK: - Errors

    @Test func badInputs() {
        let cases: [(text: String, message: String, column: Int)] = [
            ("", "expected an entity name", 1),
            ("where x == 1", "expected an entity name", 1),
            ("42", "expected an entity name", 1),
            ("Book Author", "unexpected 'Author' after the query", 6),
            ("Book where", "expected a condition after where", 11),
            ("Book where )", "expected a condition after where", 12),
            ("Book where pages >", "expected a value after '>'", 19),
            ("Book where pages > )", "expected a value after '>'", 20),
            ("Book where pages > and", "expected a value after '>'", 20),
            (#"Book where title == "abc"#, "unterminated string", 21),
            ("Book where title == 'it\\'", "unterminated string", 21),
            (
                #"Book where title contains[x] "a""#,
                "unknown option '[x]' after contains; expected [c], [d] or [cd]", 26
            ),
            (
                #"Book where title like[] "a""#, "unknown option '[]' after like; expected [c], [d] or [cd]", 22
            ),
            (#"Book where title contains[c "x""#, "expected ']' to close the options of contains", 29),
            ("Book where title contains", "expected a value after contains", 26),
            ("Book where x in [1, 2", "expected ']' to close the list", 22),
            ("Book where x in [1 2]", "expected ']' to close the list", 20),
            ("Book where x in [1,]", "expected a value after ','", 20),
            ("Book where x in 1", "expected '[' after in", 17),
            ("Book limit", "expected a number after limit", 11),
            ("Book limit x", "expected a number after limit", 12),
            ("Book limit -3", "limit must not be negative", 12),
            ("Book offset 2.5", "expected a whole number after offset", 13),
            ("Book limit 99999999999999999999", "limit 99999999999999999999 is too large", 12),
            ("Book limit 5 limit 6", "'limit' given twice", 14),
            ("Book offset 1 sort by a offset 2", "'offset' given twice", 25),
            ("Book sort by a sort by b", "'sort by' given twice", 16),
            ("Book where a == 1 where b", "'where' given twice", 19),
            ("Book limit 1 where a", "'where' must come right after the entity name", 14),
            ("Book sort author", "expected 'by' after sort", 11),
            ("Book sort by", "expected a field name after sort by", 13),
            ("Book sort by a,", "expected a field name after ','", 16),
            ("Book where (a == 1))", "unexpected ')'", 20),
            ("Book where (a == 1", "expected ')' to close the '(' at column 12", 19),
            ("Book where d > 2024-13-01", "invalid date '2024-13-01'", 16),
            ("Book where d > 2023-02-29", "invalid date '2023-02-29'", 16),
            ("Book where d > 2024-05-01T25:00:00Z", "invalid date '2024-05-01T25:00:00Z'", 16),
            ("Book where d > 2024-05-01T10", "invalid date '2024-05-01T10'", 16),
            ("Book where a between 1 5", "expected 'and' after the lower bound of between", 24),
            ("Book where a between 1 and", "expected a value after and", 27),
            ("Book where a not b", "expected in, between, contains, beginswith, endswith or like after not", 18),
            ("Book where a # 1", "unexpected character '#'", 14),
            ("Book where a & b", "unexpected character '&'; use '&&' or and", 14),
            ("Book where a ? b : c", "unexpected character '?'; only '??' is an operator", 14),
            (#"Book where s == "\q""#, "unknown escape '\\q' in string", 18),
            (#"Book where s == "\u{D800}""#, "invalid unicode escape '\\u{D800}'", 18),
            (#"Book where s == "\u41""#, "expected '{' after \\u; unicode escapes are written \\u{1F600}", 18),
            ("Book where any tags", "expected a comparison or a test after 'any tags'", 20),
            ("Book where all a.b or x", "expected a comparison or a test after 'all a.b'", 20),
            ("Book where any 5 == 1", "expected a field name after any", 16),
            ("Book where a < b < c", "comparisons cannot be chained; join them with and", 18),
            ("Book where 5", "expected a condition, such as a comparison, a test or a boolean field", 12),
            ("Book where (a + 1) and b", "expected a condition, such as a comparison, a test or a boolean field", 12),
            ("Book where `limit == 1", "unterminated backticked name", 12),
            ("Book where `` == 1", "empty backticked name", 12),
            ("Book where x == 12abc", "invalid number '12abc'", 17),
            ("Book where x == 1e999", "the number 1e999 is out of range", 17),
            ("Book where a. == 1", "expected a field name after '.'", 15),
            ("Book where $ == 1", "'$' names the element of any or all, and is only valid in their body", 12),
            ("Book where not", "expected a condition after not", 15),
            ("Book where a and or b", "expected a condition after and", 18),
            ("Book where a == 1 ||", "expected a condition after '||'", 21),
            ("Book where count(tags > 1", "expected ')' to close count(", 23),
            ("Book where x == -", "expected a value after '-'", 18),
            ("Book where x == 1 +", "expected a value after '+'", 20),
            ("Book where x ?? == 1", "expected a value after '??'", 17),
            ("Book where x == 1 2", "unexpected '2' after the query", 19),
            ("Book where x == 'a\nb' 'c\nd'", "unexpected ''c d'' after the query", 23),
            ("Book.x", "unexpected '.' after the query", 5),
            ("Book where sort by a", "expected a condition after where", 12),
            ("Book where not any tags", "expected a comparison or a test after 'any tags'", 24),
        ]
        for (text, message, column) in cases {
            let error = parseError(text)
            #expect(error?.message == message, "\(text)")
            #expect(error?.column == column, "\(text)")
            #expect(error?.text == text)
        }
    }

    @Test func badPredicates() {
        let cases: [(text: String, message: String, column: Int)] = [
            ("", "expected a condition", 1),
            ("   ", "expected a condition", 4),
            ("a == 1 )", "unexpected ')'", 8),
            ("a == 1 b", "unexpected 'b' after the predicate", 8),
            ("a == 1 sort by a", "unexpected 'sort' after the predicate", 8),
            ("`count`(x) == 1", "unexpected '(' after the predicate", 8),
        ]
        for (text, message, column) in cases {
            let error = parseError(text, predicateOnly: true)
            #expect(error?.message == message, "\(text)")
            #expect(error?.column == column, "\(text)")
        }
    }

    @Test func descriptionPointsAtTheColumn() throws {
        let error = try #require(parseError("Book where pages >"))
        #expect(error.column == 19)
        #expect(
            error.description == """
                error at column 19: expected a value after '>'
                Book where pages >
                                  ^
                """)
        let bad = try #require(parseError("Book where pages > 2024-13-01"))
        #expect(
            bad.description == """
                error at column 20: invalid date '2024-13-01'
                Book where pages > 2024-13-01
                                   ^
                """)
        let lines = bad.description.split(separator: "\n", omittingEmptySubsequences: false)
        #expect(lines.count == 3)
        #expect(lines[2].count == 20)
        #expect(lines[2].last == "^")

        let first = try #require(parseError("4"))
        #expect(first.description == "error at column 1: expected an entity name\n4\n^")

        // Tabs are kept so the caret lines up; line breaks are shown as spaces.
        let tabbed = try #require(parseError("Book\twhere\n#"))
        #expect(tabbed.description == "error at column 12: unexpected character '#'\nBook\twhere #\n    \t      ^")

        let string = try #require(parseError("Book where t == 'open"))
        #expect(string.description.hasSuffix("\nBook where t == 'open\n                ^"))
    }

    @Test func deepNestingIsAnErrorNotACrash() throws {
        let tooDeep = [
            String(repeating: "(", count: 10_000) + "a",
            String(repeating: "not ", count: 10_000) + "a",
            String(repeating: "!", count: 10_000) + "a",
            "x == " + String(repeating: "-", count: 10_000) + "a",
            "x == " + String(repeating: "a + ", count: 10_000) + "a",
            "x == " + String(repeating: "a ?? ", count: 10_000) + "a",
            "x == " + String(repeating: "count(", count: 10_000) + "a",
            String(repeating: "any a (", count: 10_000) + "$",
            "x in [" + String(repeating: "(x in [", count: 10_000),
        ]
        // The deepest the limits allow, by every way of nesting.
        let atTheLimit = [("(", ")"), ("a == (", ")"), ("any a (", ")"), ("x in [(", ")]"), ("not (", ")")].map {
            String(repeating: $0.0, count: 32) + "b" + String(repeating: $0.1, count: 32)
        }
        // On a thread with a small stack, as a daemon's worker might have.
        let results = Results()
        let done = DispatchSemaphore(value: 0)
        let thread = Thread {
            for text in tooDeep + atTheLimit {
                results.append(parseError(text, predicateOnly: true)?.message)
            }
            done.signal()
        }
        #if RILL_THREAD_SANITIZER
            // ThreadSanitizer's instrumentation makes the parser's frames larger: in that build
            // 512 KiB overflowed (the test process ended with SIGSEGV); 1 MiB holds.
            thread.stackSize = 1024 * 1024
        #else
            thread.stackSize = 512 * 1024
        #endif
        thread.start()
        done.wait()
        let messages = results.values
        #expect(messages.count == tooDeep.count + atTheLimit.count)
        for (text, message) in zip(tooDeep, messages) {
            #expect(message == "the query is nested too deeply", "\(text.prefix(20))")
        }
        for (text, message) in zip(atTheLimit, messages.dropFirst(tooDeep.count)) {
            #expect(message == nil, "\(text.prefix(20))")
        }

        let parentheses = String(repeating: "(", count: 32) + "a" + String(repeating: ")", count: 32)
        #expect(try predicate(parentheses) == isTrue("a"))
        #expect(parseError("(\(parentheses))", predicateOnly: true)?.column == 33)
        #expect(throws: Never.self) { try predicate("x == " + String(repeating: "a + ", count: 100) + "a") }
        let long = "x == " + String(repeating: "a + ", count: 200) + "a"
        #expect(parseError(long, predicateOnly: true)?.message == "the query is nested too deeply")
    }

    @Test func fuzzNeverCrashes() {
        let seed =
            ProcessInfo.processInfo.environment["RILL_FUZZ_SEED"].flatMap { UInt64($0) }
            ?? UInt64.random(in: 0...UInt64.max)
        print("QueryParserTests.fuzzNeverCrashes seed \(seed) (rerun with RILL_FUZZ_SEED=\(seed))")
        var random = SeededGenerator(seed: seed)
        let pieces = [
            "Book", "where", "WHERE", "and", "or", "not", "in", "between", "contains", "beginswith", "endswith", "like",
            "any", "all", "sort", "by", "asc", "desc", "limit", "offset", "nil", "null", "true", "false", "count",
            "&&", "||", "!", "==", "=", "!=", "<>", "<", "<=", ">", ">=", "+", "-", "*", "/", "%", "??", "(", ")",
            "[", "]", ",", ".", "$", "[c]", "[cd]", "[x]", "title", "a.b", "`limit`", "`", "\"", "'", "\\",
            "\"x\"", "'y'", "\"\\u{1F600}\"", "\"\\u{", "\\n", "42", "-7", "3.5", "1e3", "1e", "99999999999999999999",
            "1e999", "2024-05-01", "2024-05-01T10:30:00Z", "2024-05-01T10:30:00.5+02:00", "2024-13-01", "2024-",
            "3F2504E0-4F89-11D3-9A0C-0305E82C3301", "3F2504E0-4F89", "🙂", "é", "e\u{301}", "\t", "\n", "\r\n", "#",
            "?", ":", "&", "|", "\u{0}", "日本",
        ]
        let separators = ["", " ", " ", " ", "  "]
        let runs = ProcessInfo.processInfo.environment["RILL_FUZZ_RUNS"].flatMap { Int($0) } ?? 20_000
        for _ in 0..<runs {
            // Half start like a real query, so more of them get past the first words.
            var text = Bool.random(using: &random) ? "Book where " : ""
            let count = Int.random(in: 0...14, using: &random)
            for _ in 0..<count {
                if Int.random(in: 0..<8, using: &random) == 0 {
                    let scalar = Unicode.Scalar(UInt32.random(in: 0...0x2FFF, using: &random)) ?? "x"
                    text.unicodeScalars.append(scalar)
                } else {
                    text += pieces[Int.random(in: 0..<pieces.count, using: &random)]
                }
                text += separators[Int.random(in: 0..<separators.count, using: &random)]
            }
            for predicateOnly in [false, true] {
                guard let error = parseError(text, predicateOnly: predicateOnly) else { continue }
                let columns = 1...(text.count + 1)
                #expect(columns.contains(error.column), "seed \(seed): \(text.debugDescription)")
                let lines = error.description.split(separator: "\n", omittingEmptySubsequences: false)
                #expect(lines.count == 3, "seed \(seed): \(text.debugDescription)")
                #expect(lines.last?.count == error.column, "seed \(seed): \(text.debugDescription)")
            }
        }
    }
}
