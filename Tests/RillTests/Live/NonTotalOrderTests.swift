import Foundation
import RillTestSupport
import RillWorkloads
import Testing

@testable import Rill

/// A live query sorted by its models keeps its rows unretained in order; a row that leaves must
/// leave the list even when the sort is not a total order, as `String`'s `<` is not for some
/// strings ("\u{C5}\0" and "\u{212B}" are neither before, after nor equal to each other). Before,
/// such a row stayed in the list after the query let it go, and reading the results crashed.
@Suite struct NonTotalOrderTests {
    let directory = TemporaryDirectory()

    struct Labelled: PersistentModel, Equatable {
        var id: Int
        var label: String
    }

    @Test func rowsSortedByStringsThatDoNotOrderLeaveWhenTheirRecordsChange() throws {
        var random = SeededGenerator(label: "non-total order")
        let container = try ModelContainer(
            for: Labelled.self, configurations: ModelConfiguration(url: directory.url.appendingPathComponent("store")))
        let context = ModelContext(container)
        let labels = ["\u{C5}\0", "\u{212B}", "\u{C5}", "A\u{30A}\0", "Zoë", "A", "", "\0", "a\0b"]
        for id in 0..<40 { context.insert(Labelled(id: id, label: labels.randomElement(using: &random)!)) }
        try context.save()
        var descriptors = [
            FetchDescriptor<Labelled>(sortBy: [SortDescriptor(\.label)]),
            FetchDescriptor<Labelled>(sortBy: [SortDescriptor(\.label, order: .reverse)]),
        ]
        var windowed = FetchDescriptor<Labelled>(sortBy: [SortDescriptor(\.label)])
        windowed.fetchLimit = 10
        descriptors.append(windowed)
        let queries = try descriptors.map { try LiveQuery($0, in: container) }
        for _ in 0..<30 {
            for _ in 0..<Int.random(in: 1...4, using: &random) {
                let id = Int.random(in: 0..<45, using: &random)
                if Int.random(in: 0..<4, using: &random) == 0 {
                    if let model = try context.model(Labelled.self, id: id) { context.delete(model) }
                } else {
                    context.insert(Labelled(id: id, label: labels.randomElement(using: &random)!))
                }
            }
            try context.save()
            for (query, descriptor) in zip(queries, descriptors) {
                try query.catchUp()
                // Every row is readable, and the query holds the models a fetch finds (the order
                // of strings that do not order is not defined, so only the models are compared).
                let live = query.results.map { $0 }
                let fetched = try context.fetch(descriptor)
                #expect(live.count == fetched.count)
                if descriptor.fetchLimit == nil {
                    #expect(Set(live.map(\.id)) == Set(fetched.map(\.id)))
                    #expect(live.allSatisfy { model in fetched.contains(model) })
                }
            }
        }
    }
}
