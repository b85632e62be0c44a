import Foundation
import RillTestSupport
import RillWorkloads
import Testing

@testable import Rill

/// The byte matcher's memo of the keys it met (`RecordMatcher.KeyMemo`) against the evaluator:
/// one program decides many records in a row, so that what it learned of one record's keys is
/// used on the next. The keys share prefixes and cross the memo's sizes (8 and 16 bytes), come
/// in random orders and subsets, and the records are damaged byte by byte after a good one.
@Suite struct RecordMatcherKeyMemoTests {
    /// Names whose encodings (tag, length, text) are 3 to 19 bytes; several differ only in their
    /// last byte, past the first 8 or in the middle of 16.
    static let names = [
        "a", "b", "abcde", "abcdf", "abcdef", "abcdeg", "abcdefghij", "abcdefghik", "abcdefghijklmn", "abcdefghijklmo",
        "abcdefghijklmnop", "abcdefghijklmnoq", "xbcdefghijklmn",
    ]

    struct Generator {
        var random: SeededGenerator

        mutating func pick<T>(_ values: [T]) -> T { values.randomElement(using: &random)! }

        mutating func value() -> RecordValue {
            switch Int.random(in: 0..<6, using: &random) {
            case 0: return .int(Int64(Int.random(in: -3...3, using: &random)))
            case 1: return .string(pick(["", "a", "ab", "b", "café", "zz"]))
            case 2: return .double(pick([0, 1.5, -2, .nan]))
            case 3: return .null
            case 4: return .bool(Bool.random(using: &random))
            default: return .uint(UInt64(Int.random(in: 0...300, using: &random)))
            }
        }

        /// Mostly the same keys in the same order, as a model's records are; now and then a
        /// shuffle or a subset.
        mutating func record(_ order: [String]) -> RecordValue {
            var names = order
            if Int.random(in: 0..<4, using: &random) == 0 { names.shuffle(using: &random) }
            if Int.random(in: 0..<4, using: &random) == 0 { names = names.filter { _ in Bool.random(using: &random) } }
            return .map(names.map { RecordField(name: $0, value: value()) })
        }

        mutating func predicate() -> QueryNode {
            let leaves = (0..<Int.random(in: 1...3, using: &random)).map { _ -> QueryNode in
                let field = QueryNode.field([pick(RecordMatcherKeyMemoTests.names)])
                if Bool.random(using: &random) {
                    return .compare(pick(QueryComparison.allCases), field, .literal(value()))
                }
                return .string(.contains, field, .literal(.string(pick(["a", "b", ""]))), [])
            }
            return leaves.count == 1 ? leaves[0] : (Bool.random(using: &random) ? .and(leaves) : .or(leaves))
        }
    }

    /// `decision` for `bytes` is the evaluator's answer, or `unknown`; and always `unknown`
    /// when the `RecordValue` path rejects the bytes.
    static func check(
        _ decision: RecordMatcher.Decision, _ node: QueryNode, _ bytes: [UInt8], fields: Set<String>
    ) -> String? {
        let record = bytes.withUnsafeBytes { try? RecordValue(record: $0, fields: fields) }
        guard let record else { return decision == .unknown ? nil : "decided \(decision) on bytes the reader rejects" }
        guard decision != .unknown else { return nil }
        let expected = QueryEvaluator.matches(node, record)
        return (decision == .yes) == expected ? nil : "decided \(decision), the evaluator says \(expected) on \(record)"
    }

    @Test func decisionsAfterWhatTheMemoLearnedEqualTheEvaluator() throws {
        var generator = Generator(random: SeededGenerator(label: "record matcher key memo"))
        var decided = 0
        var total = 0
        for round in 0..<OracleScale.queries(default: 300) {
            let node = generator.predicate()
            guard let matcher = RecordMatcher(node), let fields = node.topLevelFields else { continue }
            let order = Self.names.shuffled(using: &generator.random).prefix(
                Int.random(in: 1...8, using: &generator.random))
            let records = (0..<40).map { _ in generator.record(Array(order)).recordBytes() }
            var failure: String?
            RecordMatcher.withProgram(matcher) { program in
                for bytes in records where failure == nil {
                    let decision = bytes.withUnsafeBytes { program!.decide($0) }
                    total += 1
                    if decision != .unknown { decided += 1 }
                    failure = Self.check(decision, node, bytes, fields: fields)
                }
            }
            if let failure {
                Issue.record("round \(round): \(node): \(failure)")
                break
            }
        }
        #expect(decided > total / 2, "the matcher decided \(decided) of \(total)")
    }

    /// After a good record has taught the memo its keys, every damaged copy (each byte set to
    /// each of a few values, each truncation) is decided as the evaluator decides it, or left to
    /// the reader, which must be the case for every copy the reader rejects; and the good record
    /// is still decided after each.
    @Test func damagedRecordsAfterAGoodOneAreLeftToTheReader() throws {
        var generator = Generator(random: SeededGenerator(label: "record matcher key memo damage"))
        var rejected = 0
        for round in 0..<OracleScale.queries(default: 12) {
            let node = QueryNode.or(
                Self.names.map { .compare(.notEqual, .field([$0]), .literal(.string("never"))) })
            let matcher = try #require(RecordMatcher(node))
            let fields = try #require(node.topLevelFields)
            let order = Self.names.shuffled(using: &generator.random)
            let good = RecordValue.map(order.map { RecordField(name: $0, value: generator.value()) }).recordBytes()
            var copies: [[UInt8]] = (0..<good.count).map { Array(good[..<$0]) }
            for index in good.indices {
                for byte: UInt8 in [0x00, 0x07, 0x0F, 0x7F, 0x80, 0xFF, good[index] ^ 1] where byte != good[index] {
                    var copy = good
                    copy[index] = byte
                    copies.append(copy)
                }
            }
            var failure: String?
            RecordMatcher.withProgram(matcher) { program in
                let expected = good.withUnsafeBytes { program!.decide($0) }
                if expected == .unknown { failure = "the good record is not decided" }
                for copy in copies where failure == nil {
                    let decision = copy.withUnsafeBytes { program!.decide($0) }
                    if (copy.withUnsafeBytes { try? RecordValue(record: $0, fields: fields) }) == nil { rejected += 1 }
                    failure = Self.check(decision, node, copy, fields: fields)
                    if failure == nil, good.withUnsafeBytes({ program!.decide($0) }) != expected {
                        failure = "the good record is decided otherwise after \(copy)"
                    }
                    if let found = failure { failure = "\(found) (copy \(copy))" }
                }
            }
            if let failure {
                Issue.record("round \(round): \(failure)")
                break
            }
        }
        #expect(rejected > 1000, "only \(rejected) damaged copies were rejected by the reader")
    }
}
