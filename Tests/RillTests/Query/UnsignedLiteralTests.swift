import Foundation
import RillTestSupport
import Testing

@testable import Rill

/// Text queries with integers beyond `Int64`: a literal up to `UInt64.max` is a `UInt64`, and
/// compares exactly with stored `UInt64`s, through an index or a scan.
@Suite struct UnsignedLiteralTests {
    let directory = TemporaryDirectory()

    struct Counter: PersistentModel {
        var id: Int
        var u: UInt64
        var v: UInt64
        static let indexes: [ModelIndex<Counter>] = [ModelIndex(\.u)]
    }

    @Test func literalsBeyondInt64MatchStoredUnsignedValues() throws {
        let container = try ModelContainer(
            for: Counter.self, configurations: ModelConfiguration(url: directory.url.appendingPathComponent("store")))
        let context = container.mainContext
        let values: [UInt64] = [0, 7, 1 << 63 - 1, 1 << 63, 1 << 63 + 1, .max - 1, .max]
        let counters = values.enumerated().map { Counter(id: $0.offset, u: $0.element, v: $0.element) }
        for counter in counters { context.insert(counter) }
        try context.save()
        let literals = [
            "18446744073709551615", "18446744073709551614", "9223372036854775808", "9223372036854775807",
            "18446744073709551616",
        ]
        for text in literals {
            let exact = UInt64(text)
            for field in ["u", "v"] {
                for (op, holds) in [
                    ("==", { (x: UInt64) in exact.map { x == $0 } ?? false }),
                    (">=", { (x: UInt64) in exact.map { x >= $0 } ?? false }),
                    ("<", { (x: UInt64) in exact.map { x < $0 } ?? true }),
                ] {
                    let query = try QueryParser.parse("Counter where \(field) \(op) \(text) sort by id")
                    let ids = try container.store.run(query).map { row -> Int in
                        guard case .map(let fields) = row.record, case .int(let id)? = fields.value(named: "id") else {
                            return -1
                        }
                        return Int(id)
                    }
                    #expect(ids == counters.filter { holds($0.u) }.map(\.id), "\(field) \(op) \(text)")
                }
            }
        }
    }
}
