import Foundation
import RillTestSupport
import Testing

@testable import Rill

@Suite struct QueryEvaluatorTests {
    struct Recipe: Codable {
        struct Ingredient: Codable {
            var name: String
            var grams: Int
        }
        var title: String
        var pages: Int
        var rating: Double?
        var plannedDate: Date?
        var isRead: Bool
        var tags: [String]
        var ingredients: [Ingredient]
        var price: Decimal
    }

    static let record: RecordValue = {
        let recipe = Recipe(
            title: "Crème Brûlée", pages: 320, rating: nil, plannedDate: Date(timeIntervalSince1970: 1_700_000_000),
            isRead: false, tags: ["dessert", "French"],
            ingredients: [.init(name: "cream", grams: 500), .init(name: "sea salt", grams: 2)],
            price: Decimal(string: "12.50")!)
        let bytes = try! RecordCoder.encode(recipe)
        return try! bytes.withUnsafeBytes { try RecordValue(record: $0) }
    }()

    func holds(_ node: QueryNode) -> Bool { QueryEvaluator.matches(node, Self.record) }

    func field(_ path: String...) -> QueryNode { .field(path) }
    func value(_ v: RecordValue) -> QueryNode { .literal(v) }

    @Test func comparisonsAcrossNumberKinds() {
        #expect(holds(.compare(.greater, field("pages"), value(.int(300)))))
        #expect(holds(.compare(.greater, field("pages"), value(.double(319.5)))))
        #expect(!holds(.compare(.greater, field("pages"), value(.double(320.0)))))
        #expect(holds(.compare(.greaterOrEqual, field("pages"), value(.uint(320)))))
        #expect(holds(.compare(.equal, field("pages"), value(.double(320)))))
        #expect(holds(.compare(.notEqual, field("pages"), value(.int(321)))))
        #expect(holds(.compare(.less, field("price"), value(.int(13)))))
        #expect(holds(.compare(.lessOrEqual, field("price"), value(.double(12.5)))))
    }

    @Test func nilChecksAndMissingFields() {
        #expect(holds(.compare(.equal, field("rating"), value(.null))))
        #expect(!holds(.compare(.notEqual, field("rating"), value(.null))))
        #expect(holds(.compare(.equal, field("nowhere"), value(.null))))
        // Ordering against nil is false both ways.
        #expect(!holds(.compare(.less, field("rating"), value(.double(3)))))
        #expect(!holds(.compare(.greaterOrEqual, field("rating"), value(.double(3)))))
        #expect(holds(.compare(.greater, .coalesce(field("rating"), value(.double(4))), value(.double(3)))))
    }

    @Test func booleanStructure() {
        let t: QueryNode = .compare(.equal, field("isRead"), value(.bool(false)))
        let f: QueryNode = .compare(.equal, field("isRead"), value(.bool(true)))
        #expect(holds(.and([t, t])))
        #expect(!holds(.and([t, f])))
        #expect(holds(.or([f, t])))
        #expect(!holds(.or([f, f])))
        #expect(holds(.not(f)))
        #expect(holds(.and([])))
        #expect(!holds(.or([])))
        // `pages > 300 && !isRead`
        #expect(holds(.and([.compare(.greater, field("pages"), value(.int(300))), .not(f)])))
    }

    @Test func stringTestsWithOptions() {
        let title = field("title")
        #expect(holds(.string(.contains, title, value(.string("Brûlée")), [])))
        #expect(!holds(.string(.contains, title, value(.string("brulee")), [])))
        #expect(!holds(.string(.contains, title, value(.string("brulee")), .caseInsensitive)))
        #expect(!holds(.string(.contains, title, value(.string("brulee")), .diacriticInsensitive)))
        #expect(holds(.string(.contains, title, value(.string("brulee")), [.caseInsensitive, .diacriticInsensitive])))
        #expect(holds(.string(.beginsWith, title, value(.string("creme")), [.caseInsensitive, .diacriticInsensitive])))
        #expect(holds(.string(.endsWith, title, value(.string("Brûlée")), [])))
        #expect(holds(.string(.like, title, value(.string("Cr?me*")), [])))
        #expect(holds(.string(.like, title, value(.string("*Br*e")), [])))
        #expect(!holds(.string(.like, title, value(.string("Cr*x")), [])))
        #expect(!holds(.string(.contains, field("pages"), value(.string("3")), [])))
    }

    @Test func membershipRangesAndQuantifiers() {
        #expect(holds(.isIn(field("pages"), [value(.int(1)), value(.int(320))])))
        #expect(!holds(.isIn(field("pages"), [])))
        #expect(holds(.between(field("pages"), lower: value(.int(300)), upper: value(.int(320)))))
        #expect(!holds(.between(field("pages"), lower: value(.int(321)), upper: value(.int(400)))))
        #expect(holds(.any(field("tags"), body: .compare(.equal, .element([]), value(.string("French"))))))
        #expect(!holds(.all(field("tags"), body: .compare(.equal, .element([]), value(.string("French"))))))
        // `ingredients.contains { $0.name.contains("salt") }`
        #expect(
            holds(.any(field("ingredients"), body: .string(.contains, .element(["name"]), value(.string("salt")), []))))
        #expect(
            holds(
                .any(field("ingredients", "name"), body: .string(.contains, .element([]), value(.string("salt")), []))))
        #expect(holds(.all(field("ingredients"), body: .compare(.greater, .element(["grams"]), value(.int(1))))))
        #expect(holds(.all(field("nowhere"), body: .literal(.bool(false)))))
        #expect(holds(.compare(.equal, .count(field("tags")), value(.int(2)))))
        #expect(holds(.compare(.equal, .count(field("nowhere")), value(.int(0)))))
    }

    @Test func arithmeticAndConditionals() {
        #expect(holds(.compare(.equal, .arithmetic(.multiply, field("pages"), value(.int(2))), value(.int(640)))))
        #expect(holds(.compare(.equal, .arithmetic(.divide, field("pages"), value(.double(2))), value(.double(160)))))
        #expect(holds(.compare(.equal, .arithmetic(.remainder, field("pages"), value(.int(7))), value(.int(5)))))
        #expect(holds(.compare(.equal, .negate(field("pages")), value(.int(-320)))))
        #expect(!holds(.compare(.equal, .arithmetic(.divide, field("pages"), value(.int(0))), value(.int(0)))))
        let overflow = QueryNode.arithmetic(.add, value(.int(.max)), value(.int(1)))
        #expect(holds(.compare(.greater, overflow, value(.int(.max)))))
        #expect(
            holds(
                .compare(
                    .equal, .conditional(field("isRead"), then: value(.int(1)), otherwise: value(.int(2))),
                    value(.int(2)))))
    }

    @Test func arithmeticIsExactAndTotal() {
        func result(_ op: QueryArithmetic, _ a: RecordValue, _ b: RecordValue) -> RecordValue {
            QueryEvaluator.arithmetic(op, a, b)
        }
        // Exact while the result fits 64 bits, of either sign.
        #expect(result(.add, .int(.max), .int(1)) == .uint(UInt64(Int64.max) + 1))
        #expect(result(.subtract, .uint(0), .int(1)) == .int(-1))
        #expect(result(.subtract, .int(0), .int(.min)) == .uint(UInt64(Int64.max) + 1))
        #expect(result(.divide, .int(.min), .int(-1)) == .uint(UInt64(Int64.max) + 1))
        #expect(result(.multiply, .uint(.max), .int(1)) == .uint(.max))
        #expect(result(.add, .uint(.max), .uint(.max)) == .double(2 * Double(UInt64.max)))
        #expect(result(.multiply, .int(100_000_000), .int(1_000_000_000_000)) == .double(1e20))
        #expect(result(.multiply, .int(.min), .int(.min)) == .double(Double(Int64.min) * Double(Int64.min)))
        // Swift's truncating division and remainder.
        #expect(result(.divide, .int(-7), .int(2)) == .int(-3))
        #expect(result(.remainder, .int(-7), .int(2)) == .int(-1))
        // Integer division by zero is null; floating-point division is IEEE.
        #expect(result(.divide, .int(1), .int(0)) == .null)
        #expect(result(.remainder, .int(.min), .int(0)) == .null)
        #expect(result(.divide, .double(1), .int(0)) == .double(.infinity))
        #expect(result(.add, .string("1"), .int(1)) == .null)
        let byZero = QueryNode.arithmetic(.divide, field("pages"), value(.int(0)))
        #expect(!holds(.compare(.greater, byZero, value(.int(1)))))
        #expect(holds(.not(.compare(.greater, byZero, value(.int(1))))))
        #expect(holds(.compare(.equal, .coalesce(byZero, value(.int(-1))), value(.int(-1)))))
    }

    @Test func datesCompareByTime() {
        let date = field("plannedDate")
        #expect(holds(.compare(.greater, date, value(.date(Date(timeIntervalSince1970: 1_600_000_000))))))
        #expect(holds(.compare(.equal, date, value(.date(Date(timeIntervalSince1970: 1_700_000_000))))))
    }

    @Test func sortOrderPutsNilFirstAndIsTotal() {
        let values: [RecordValue] = [
            .string("b"), .int(3), .null, .double(.nan), .bool(true), .double(2.5), .string("a"),
        ]
        let sorted = values.sorted { QueryValueOrder.sortOrder($0, $1) == .orderedAscending }
        #expect(sorted.first == .null)
        #expect(sorted[1] == .bool(true))
        #expect(sorted[2] == .double(2.5))
        #expect(sorted[3] == .int(3))
        #expect(sorted.last == .string("b"))
    }
}
