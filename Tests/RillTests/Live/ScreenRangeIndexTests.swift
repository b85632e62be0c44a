import Foundation
import RillWorkloads
import Testing

@testable import Rill

/// `ScreenRangeIndex` against the conditions themselves, evaluated as a screen evaluates them
/// (`QueryEvaluator.compare`): a test's number bounds on the indexed field let a value through
/// exactly when the index offers the test for it, and a test outside the index is always
/// offered.
@Suite struct ScreenRangeIndexTests {
    /// Values and constants at the edges: integers past a double's precision, both zeros, the
    /// infinities, NaN, other kinds of numbers, and values that are no number.
    static let pool: [RecordValue] = [
        .int(.min), .int(.max), .int(-1), .int(0), .int(1), .int(2), .int(1 << 53), .int(1 << 53 + 1),
        .uint(.max), .uint(3), .double(-0.0), .double(0.0), .double(0.5), .double(1.5), .double(2),
        .double(0x1p53), .double(1e300), .double(-.infinity), .double(.infinity), .double(.nan),
        .float(1.5), .float(-2.5), .decimal("0.5"), .decimal("not a number"), .string("1"), .null, .bool(true),
    ]

    @Test func offersExactlyTheTestsWhoseBoundsPass() {
        var random = SeededGenerator(label: "screen range index")
        var built = 0
        for _ in 0..<400 {
            let tests = (0..<Int.random(in: 6..<40, using: &random)).map { _ in
                (0..<Int.random(in: 0...4, using: &random)).map { _ in
                    ScreenTest.Condition(
                        slot: Int.random(in: 0...2, using: &random),
                        comparison: QueryComparison.allCases.randomElement(using: &random)!,
                        constant: Self.pool.randomElement(using: &random)!)
                }
            }
            guard let index = ScreenRangeIndex(tests) else { continue }
            built += 1
            func bounds(_ test: [ScreenTest.Condition]) -> [ScreenTest.Condition] {
                test.filter { condition in
                    guard condition.slot == index.slot, condition.comparison != .notEqual,
                        let number = Number(condition.constant)
                    else { return false }
                    return Number.compare(number, number) != nil
                }
            }
            for value in Self.pool {
                var offered: [Int] = []
                index.forEachCandidate(for: value) { offered.append($0) }
                #expect(offered == offered.sorted() && Set(offered).count == offered.count)
                for (position, test) in tests.enumerated() {
                    let own = bounds(test)
                    let expected =
                        own.isEmpty || own.allSatisfy { QueryEvaluator.compare($0.comparison, value, $0.constant) }
                    #expect(
                        offered.contains(position) == expected,
                        "test \(position) \(test) with \(value) on slot \(index.slot)")
                }
            }
        }
        #expect(built > 100)
    }

    /// Too few tests bounding one field's number: no index.
    @Test func needsEnoughTests() {
        let few = (0..<ScreenRangeIndex.minimumTests - 1).map { number in
            [ScreenTest.Condition(slot: 0, comparison: .less, constant: .int(Int64(number)))]
        }
        #expect(ScreenRangeIndex(few) == nil)
        #expect(ScreenRangeIndex(few + [few[0]]) != nil)
    }
}
