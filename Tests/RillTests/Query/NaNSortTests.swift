import Foundation
import RillTestSupport
import RillWorkloads
import Testing

@testable import Rill

/// A sort on a floating-point field puts a NaN after every number (before them in a reverse sort)
/// whichever way the rows are sorted: from stored order keys, by the models when the context has
/// unsaved changes, or when another sort key (text) has no order key; and in live queries.
@Suite struct NaNSortTests {
    let directory = TemporaryDirectory()

    struct Measure: PersistentModel, Equatable {
        var id: Int
        var value: Double
        var ratio: Float
        var label: String
    }

    /// The documented order, computed here: numbers in order, then NaNs, ties by identifier; a
    /// reverse sort reverses all but the ties.
    static func expected(_ measures: [Measure], _ key: (Measure) -> Double, reverse: Bool) -> [Int] {
        measures.sorted { lhs, rhs in
            let (left, right) = (key(lhs), key(rhs))
            let rank = { (value: Double) in value.isNaN ? 1 : 0 }
            if rank(left) != rank(right) { return reverse ? rank(left) > rank(right) : rank(left) < rank(right) }
            if !left.isNaN, left != right { return reverse ? left > right : left < right }
            return lhs.id < rhs.id
        }.map(\.id)
    }

    @Test func nanSortsAfterEveryNumberWithOrWithoutUnsavedChanges() throws {
        var random = SeededGenerator(label: "nan sorts")
        let container = try ModelContainer(
            for: Measure.self, configurations: ModelConfiguration(url: directory.url.appendingPathComponent("store")))
        let context = ModelContext(container)
        let values: [Double] = [2, .nan, 1, 3, .nan, 0, -.infinity, .infinity, -0.0, 5]
        var measures: [Measure] = []
        for id in 0..<60 {
            let value = values.randomElement(using: &random)!
            let ratio = Bool.random(using: &random) ? Float.nan : Float(Int.random(in: -3...3, using: &random))
            measures.append(Measure(id: id, value: value, ratio: ratio, label: id.isMultiple(of: 2) ? "even" : "odd"))
        }
        for measure in measures { context.insert(measure) }
        try context.save()
        let sorts: [(SortDescriptor<Measure>, (Measure) -> Double, Bool)] = [
            (SortDescriptor(\.value), { $0.value }, false),
            (SortDescriptor(\.value, order: .reverse), { $0.value }, true),
            (SortDescriptor(\.ratio), { Double($0.ratio) }, false),
            (SortDescriptor(\.ratio, order: .reverse), { Double($0.ratio) }, true),
        ]
        var live: [(LiveQuery<Measure>, [SortDescriptor<Measure>], (Measure) -> Double, Bool)] = []
        for (sort, key, reverse) in sorts {
            // Saved: sorted from stored order keys.
            let ids = try context.fetch(FetchDescriptor(sortBy: [sort])).map(\.id)
            #expect(ids == Self.expected(measures, key, reverse: reverse), "saved, \(sort)")
            // A text sort key first: rows sorted by their models.
            let byLabel = [SortDescriptor(\Measure.label), sort]
            let labelled = try context.fetch(FetchDescriptor(sortBy: byLabel)).map(\.id)
            let expectedLabelled =
                Self.expected(measures.filter { $0.label == "even" }, key, reverse: reverse)
                + Self.expected(measures.filter { $0.label == "odd" }, key, reverse: reverse)
            #expect(labelled == expectedLabelled, "by label, \(sort)")
            live.append((try LiveQuery(FetchDescriptor(sortBy: byLabel), in: container), byLabel, key, reverse))
        }
        // An unsaved change: rows sorted by their models, staged ones among them.
        let added = Measure(id: 100, value: .nan, ratio: 1, label: "odd")
        context.insert(added)
        let visible = measures + [added]
        for (sort, key, reverse) in sorts {
            let ids = try context.fetch(FetchDescriptor(sortBy: [sort])).map(\.id)
            #expect(ids == Self.expected(visible, key, reverse: reverse), "unsaved, \(sort)")
        }
        try context.save()
        for (query, sortBy, _, _) in live {
            try query.catchUp()
            #expect(query.results.map(\.id) == (try context.fetch(FetchDescriptor(sortBy: sortBy)).map(\.id)))
        }
    }
}
