import Foundation
import RillTestSupport
import RillWorkloads
import Testing

@testable import Rill

/// The byte matcher on records of integers of every length, whole and damaged: it decides a
/// record only when the `RecordValue` path reads it without an error, and then as the evaluator
/// does. (Its varints are skipped a word at a time; the damage is mostly theirs.)
@Suite struct RecordMatcherDamageTests {
    static func integer(using random: inout SeededGenerator) -> RecordValue {
        switch Int.random(in: 0..<5, using: &random) {
        case 0: .int(Int64.random(in: -64...63, using: &random))
        case 1: .int(Int64.random(in: -1_000_000...1_000_000, using: &random))
        case 2: .int(Int64.random(in: .min ... .max, using: &random))
        case 3: .uint(UInt64.random(in: .min ... .max, using: &random))
        default: .int([.min, .max, 0, -1, 1 << 56, -(1 << 56), 1 << 62].randomElement(using: &random)!)
        }
    }

    /// A record of a few integers (`n0`…), a double `a` among them, and a name last or not at all.
    static func record(using random: inout SeededGenerator) -> RecordValue {
        var fields: [RecordField] = []
        let integers = Int.random(in: 1...5, using: &random)
        let doubleAt = Int.random(in: 0...integers, using: &random)
        for index in 0...integers {
            if index == doubleAt {
                fields.append(
                    RecordField(name: "a", value: .double(Double(Int.random(in: -1_000...1_000, using: &random)))))
            }
            if index < integers { fields.append(RecordField(name: "n\(index)", value: integer(using: &random))) }
        }
        if Bool.random(using: &random) { fields.append(RecordField(name: "name", value: .string("entry 12"))) }
        return .map(fields)
    }

    /// `bytes` with one byte changed, or a varint made longer, or cut short.
    static func damaged(_ bytes: [UInt8], using random: inout SeededGenerator) -> [UInt8] {
        var damaged = bytes
        let at = Int.random(in: 2..<bytes.count, using: &random)
        switch Int.random(in: 0..<4, using: &random) {
        case 0: damaged[at] = [0x00, 0x80, 0xFF, 0x01, 0x7F, 0x81].randomElement(using: &random)!
        case 1: damaged[at] = UInt8.random(in: 0...255, using: &random)
        // A continuation byte put in: a varint one group longer, or a redundant zero group.
        case 2: damaged.insert([0x80, 0x81, 0xFF].randomElement(using: &random)!, at: at)
        default: damaged.removeSubrange(at...)
        }
        return damaged
    }

    @Test func damagedRecordsAreDecidedOnlyWhenTheyRead() throws {
        var random = SeededGenerator(label: "record matcher, damaged integers")
        var decided = 0
        var unread = 0
        var wholes = 0
        var wholesDecided = 0
        for round in 0..<300 {
            let field = Bool.random(using: &random) ? "a" : "n0"
            let constant = Int64.random(in: -1_000...1_000, using: &random)
            let node = QueryNode.compare(
                [.greater, .lessOrEqual, .equal].randomElement(using: &random)!, .field([field]),
                field == "a" ? .literal(.double(Double(constant))) : .literal(.int(constant)))
            let matcher = try #require(RecordMatcher(node))
            let fields = try #require(node.topLevelFields)
            RecordMatcher.withProgram(matcher) { program in
                for _ in 0..<40 {
                    let whole = Self.record(using: &random).recordBytes()
                    for bytes in [whole] + (0..<4).map({ _ in Self.damaged(whole, using: &random) }) {
                        let decision = bytes.withUnsafeBytes { program!.decide($0) }
                        let record = try? bytes.withUnsafeBytes { try RecordValue(record: $0, fields: fields) }
                        if bytes == whole {
                            wholes += 1
                            if decision != .unknown { wholesDecided += 1 }
                        }
                        guard decision != .unknown else { continue }
                        decided += 1
                        guard let record else {
                            unread += 1
                            Issue.record(
                                "round \(round): \(bytes) decided \(decision) but does not read; seed \(random.seed)")
                            continue
                        }
                        #expect(
                            (decision == .yes) == QueryEvaluator.matches(node, record),
                            "round \(round): \(node) on \(record): \(decision); seed \(random.seed)")
                    }
                }
            }
            if unread > 3 { break }
        }
        // The matcher means something only if it decides the whole records itself.
        #expect(wholesDecided > wholes * 9 / 10, "decided \(wholesDecided) of \(wholes) whole records")
        print("[record matcher, damaged integers] decided \(decided) records, \(wholesDecided) of \(wholes) whole ones")
    }
}
