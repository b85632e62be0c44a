import Foundation
import RillWorkloads
import Testing

@testable import Rill

/// The buffer of a typed fetch's models against `Array`'s slicing of the same stream, for random
/// windows, and every model it held released once whether its results were taken or not (as
/// when a later record fails to decode and the fetch throws).
@Suite struct OrderedModelsTests {
    final class Model {
        let value: Int
        let released: Counter
        init(_ value: Int, released: Counter) {
            self.value = value
            self.released = released
        }
        deinit { released.count += 1 }
    }

    final class Counter: @unchecked Sendable {
        var count = 0
    }

    @Test func keepsTheWindowAndReleasesEveryModelOnce() {
        var random = SeededGenerator(label: "ordered models")
        for round in 0..<500 {
            let total = Int.random(in: 0...3_000, using: &random)
            let offset = Int.random(in: 0...40, using: &random)
            let limit: Int? = Bool.random(using: &random) ? Int.random(in: 1...2_000, using: &random) : nil
            let takesResults = round % 3 != 0
            let released = Counter()
            var made = 0
            var results: [Int] = []
            do {
                var models = OrderedModels(of: Model.self, window: QueryWindow(offset: offset, limit: limit))
                for value in 0..<total {
                    made += 1
                    guard models.add(Model(value, released: released)) else { break }
                }
                if takesResults { results = models.results(Model.self, moving: OrderedModels.array).map(\.value) }
            }
            let expected = Array((0..<total).dropFirst(offset).prefix(limit ?? .max))
            if takesResults { #expect(results == expected, "round \(round)") }
            #expect(released.count == made, "round \(round): \(released.count) of \(made) released")
        }
    }
}
