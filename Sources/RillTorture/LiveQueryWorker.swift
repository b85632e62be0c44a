import Foundation
import Rill
import RillWorkloads
import Synchronization

#if canImport(Glibc)
    import Glibc
#endif

/// The live-query process of the soak: `rill-torture worker live-queries <store> <count> [--seed N]`.
///
/// It holds `count` typed live queries of `TortureItem`s, of varied shapes (one writer's items
/// in a range of numbers, sorted, some windowed by a limit; all of one writer's; items above a
/// number), each observed, and prints `changes <total>` once a second, until it is killed.
package enum LiveQueryWorker {
    package static func run(_ arguments: [String]) throws {
        guard arguments.count >= 2, let count = Int(arguments[1]) else {
            throw TortureUsage("usage: rill-torture worker live-queries <store> <count> [--seed N]")
        }
        let options = TortureArguments(Array(arguments.dropFirst(2)))
        var random = SeededGenerator(seed: options.integer("--seed").map { UInt64($0) } ?? 1)
        let container = try ModelContainer(
            for: TortureItem.self, configurations: ModelConfiguration(url: URL(fileURLWithPath: arguments[0])))
        let changes = Changes()
        let queue = DispatchQueue(label: "rill-torture.live-queries")
        var queries: [LiveQuery<TortureItem>] = []
        var observations: [LiveObservation] = []
        for index in 0..<count {
            let writer = Int.random(in: 0..<3, using: &random)
            let low = Int.random(in: 0..<5_000, using: &random)
            var descriptor: FetchDescriptor<TortureItem>
            switch index % 4 {
            case 0:
                let high = low + Int.random(in: 10...500, using: &random)
                descriptor = FetchDescriptor(
                    predicate: #Predicate { $0.writer == writer && $0.number >= low && $0.number < high },
                    sortBy: [SortDescriptor(\.number)])
            case 1:
                descriptor = FetchDescriptor(
                    predicate: #Predicate { $0.writer == writer }, sortBy: [SortDescriptor(\.number, order: .reverse)])
                descriptor.fetchLimit = Int.random(in: 1...20, using: &random)
            case 2:
                descriptor = FetchDescriptor(
                    predicate: #Predicate { $0.number >= low }, sortBy: [SortDescriptor(\.number)])
                descriptor.fetchLimit = Int.random(in: 5...50, using: &random)
            default:
                let high = low + Int.random(in: 10...200, using: &random)
                descriptor = FetchDescriptor(predicate: #Predicate { $0.number >= low && $0.number < high })
            }
            let query = try LiveQuery(descriptor, in: container)
            observations.append(query.observe(on: queue) { _ in changes.add() })
            queries.append(query)
        }
        TortureWriter.report("ready \(queries.count)")
        withExtendedLifetime((queries, observations)) {
            while true {
                sleep(1)
                TortureWriter.report("changes \(changes.total)")
            }
        }
    }

    /// The changes the observers were told of, from every query.
    private final class Changes: Sendable {
        private let count = Atomic<Int>(0)
        func add() { count.add(1, ordering: .relaxed) }
        var total: Int { count.load(ordering: .relaxed) }
    }
}
