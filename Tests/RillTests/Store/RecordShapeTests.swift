import Foundation
import RillTestSupport
import RillWorkloads
import Testing

@testable import Rill

/// What the shape learned from records says: the same whatever the records' order, and every
/// record it was learned from, printed as JSON and read back, conforms to it and prints the same
/// (an export's description takes back each record it lists).
@Suite struct RecordShapeTests {
    static let scalars: [RecordValue] = [
        .int(30), .int(-1), .double(25.5), .string("old"), .bool(true), .null,
        .uuid(UUID(uuid: (1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16))),
        .date(Date(timeIntervalSinceReferenceDate: 12)),
    ]

    static func value(_ depth: Int, _ random: inout SeededGenerator) -> RecordValue {
        switch depth > 0 ? Int.random(in: 0..<6, using: &random) : 0 {
        case 4:
            return .array((0..<Int.random(in: 0...3, using: &random)).map { _ in value(depth - 1, &random) })
        case 5:
            return .map(
                ["a", "b"].filter { _ in Bool.random(using: &random) }.map {
                    RecordField(name: $0, value: value(depth - 1, &random))
                })
        default:
            return scalars.randomElement(using: &random)!
        }
    }

    /// `value` with the fields of each object in name order.
    static func sorted(_ value: RecordValue) -> RecordValue {
        switch value {
        case .map(let fields):
            .map(fields.sorted { $0.name < $1.name }.map { RecordField(name: $0.name, value: sorted($0.value)) })
        case .array(let elements): .array(elements.map(sorted))
        default: value
        }
    }

    @Test func learnedShapesDoNotDependOnTheOrderAndTakeBackEveryRecord() throws {
        var random = SeededGenerator(label: "record shapes")
        for round in 0..<500 {
            let records = (0..<Int.random(in: 1...4, using: &random)).map { _ in
                RecordValue.map(
                    ["x", "y", "z"].filter { _ in Bool.random(using: &random) }.map {
                        RecordField(name: $0, value: Self.value(2, &random))
                    })
            }
            func learned(_ records: [RecordValue]) -> RecordShape {
                records.dropFirst().reduce(RecordShape(records[0])) { $0.union(with: RecordShape($1)) }
            }
            let shape = learned(records)
            let reversed = learned(records.reversed())
            let label = "round \(round): \(records.map { $0.jsonString() })"
            // Fields are in the order first seen; their kinds do not depend on it.
            #expect(Self.sorted(shape.jsonValue) == Self.sorted(reversed.jsonValue), "\(label)")
            // The description, read back as an import reads it, takes every record.
            let described = try #require(RecordShape(json: shape.jsonValue))
            for record in records {
                let json = try JSONReader.parse(Array(record.jsonString().utf8))
                guard let conformed = try? described.conform(json, entity: "E", dropNulls: false) else {
                    Issue.record("\(label): \(record.jsonString()) does not fit \(shape.jsonValue.jsonString())")
                    continue
                }
                #expect(Self.sorted(conformed).jsonString() == Self.sorted(record).jsonString(), "\(label)")
            }
        }
    }

    @Test func aFieldOfSeveralKindsIsAnyWhicheverComesFirst() {
        let a = RecordShape(.map([RecordField(name: "age", value: .int(30))]))
        let b = RecordShape(.map([RecordField(name: "age", value: .double(25.5))]))
        let c = RecordShape(.map([RecordField(name: "age", value: .int(4))]))
        for shape in [a.union(with: b).union(with: c), c.union(with: b).union(with: a), b.union(with: a)] {
            #expect(shape.jsonValue.jsonString() == #"{"age":"any"}"#)
        }
        #expect(a.union(with: c).jsonValue.jsonString() == #"{"age":"int"}"#)
    }

    /// An array of several kinds is a cycle of them only where it shows one: it comes round
    /// twice, or it holds a kind no JSON value is (what `Codable` stores of a dictionary keyed by
    /// UUIDs or by a string enum). An array of JSON values of several kinds once leaves the next
    /// record's array free, and every record learned from fits its shape.
    @Test func anArrayIsACycleOnlyWhereItShowsOne() throws {
        let uuid = RecordValue.uuid(UUID(uuid: (1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16)))
        let date = RecordValue.date(Date(timeIntervalSinceReferenceDate: 12))
        let cases: [([RecordValue], String)] = [
            ([.int(1), .string("a")], #"["any"]"#),
            ([.string("b"), .int(2), .bool(true)], #"["any"]"#),
            ([.int(1), .string("a"), .int(2), .string("b")], #"["int","string"]"#),
            ([uuid, .int(3)], #"["uuid","int"]"#),
            ([.string("left"), date], #"["string","date"]"#),
            ([.int(1), .int(2)], #"["int"]"#),
        ]
        for (elements, expected) in cases {
            let shape = RecordShape(.map([RecordField(name: "tags", value: .array(elements))]))
            #expect(shape.jsonValue.jsonString() == #"{"tags":\#(expected)}"#, "\(elements)")
        }
        // Stored records of JSON values of several kinds: the next record's array of other kinds fits.
        let stored = RecordShape(.map([RecordField(name: "tags", value: .array([.int(1), .string("a")]))]))
        let next = try JSONReader.parse(Array(#"{"tags":["b",2,[3],{"x":true}]}"#.utf8))
        #expect(throws: Never.self) { try stored.conform(next, entity: "Item", dropNulls: false) }
        let notAnArray = try JSONReader.parse(Array(#"{"tags":"b"}"#.utf8))
        #expect(throws: RillError.self) { try stored.conform(notAnArray, entity: "Item", dropNulls: false) }
    }
}
