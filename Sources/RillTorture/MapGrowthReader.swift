import Dispatch
import Foundation
import Rill
import RillLocks
import RillWorkloads

#if canImport(Glibc)
    import Glibc
#endif

/// The reader process of the `map-growth` suite: `rill-torture worker map-reader <store> --stop FILE
/// [--map-size BYTES] [--seed N]`.
///
/// While another process writes the store and grows its map, it reads in a loop (the log's head,
/// a count through an index, a get by identifier) and follows two live queries (the items numbered
/// below 40, and the 8 newest), applying every change they report to a copy of their results.
/// Once FILE exists and holds a sequence number, it reads until it has seen that commit, brings the
/// live queries up to it, and compares each with a fresh fetch and with its applied copy. It
/// prints `error <message>` for each failed read or mismatch, then one line:
/// `done reads <n> head <sequence> map <bytes> live <compared>`.
package enum MapGrowthReader {
    package static func run(_ arguments: [String]) throws {
        guard let store = arguments.first else {
            throw TortureUsage("usage: rill-torture worker map-reader <store> --stop FILE [--map-size B]")
        }
        let options = TortureArguments(Array(arguments.dropFirst()))
        guard let stop = options.value("--stop") else { throw TortureUsage("map-reader needs --stop FILE") }
        let container = try ModelContainer(
            for: TortureItem.self,
            configurations: ModelConfiguration(
                url: URL(fileURLWithPath: store), allowsSave: false,
                initialMapSize: options.integer("--map-size") ?? 1 << 20))
        let context = ModelContext(container)
        var random = SeededGenerator(seed: UInt64(options.integer("--seed") ?? 1))
        var low = FetchDescriptor<TortureItem>(
            predicate: #Predicate { $0.number < 40 }, sortBy: [SortDescriptor(\.number)])
        low.fetchLimit = 40
        var newest = FetchDescriptor<TortureItem>(sortBy: [SortDescriptor(\.number, order: .reverse)])
        newest.fetchLimit = 8
        let followed = try [low, newest].map { descriptor in
            try Followed(query: LiveQuery(descriptor, in: container), descriptor: descriptor)
        }
        var reads = 0
        var seen: UInt64 = 0
        var target: UInt64?
        let started = Date()
        while target.map({ seen < $0 }) ?? true {
            do {
                seen = max(seen, try container.lastSequence())
                _ = try context.fetchCount(FetchDescriptor<TortureItem>(predicate: #Predicate { $0.writer == 1 }))
                let number = Int.random(in: 0...max(0, Int(seen)), using: &random)
                _ = try context.model(TortureItem.self, id: "w1-\(number)")
                reads += 1
            } catch {
                TortureWriter.report("error a read failed: \(error)")
            }
            if target == nil, let text = try? String(contentsOfFile: stop, encoding: .utf8) {
                target = UInt64(text.trimmingCharacters(in: .whitespacesAndNewlines))
            }
            if Date().timeIntervalSince(started) > 1_800 {
                TortureWriter.report("error gave up before seeing commit \(target.map(String.init) ?? "?")")
                break
            }
        }
        var compared = 0
        for item in followed {
            if let problem = item.compare(with: context) {
                TortureWriter.report("error \(problem)")
            } else {
                compared += 1
            }
        }
        TortureWriter.report("done reads \(reads) head \(seen) map \(container.store.mapSize) live \(compared)")
    }

    /// A live query and the copy of its results that its changes build.
    final class Followed: Sendable {
        let query: LiveQuery<TortureItem>
        let descriptor: FetchDescriptor<TortureItem>
        let queue = DispatchQueue(label: "rill.torture.map-reader")
        let applied: Copy
        let observation: LiveObservation

        /// The results that the changes build, written on `queue`, and the commit they are at;
        /// nil until the first copy is taken.
        final class Copy: Sendable {
            let state = Lock<(items: [TortureItem], sequence: UInt64)?>(nil)
            var items: [TortureItem] { state.withLock { $0?.items ?? [] } }
        }

        init(query: LiveQuery<TortureItem>, descriptor: FetchDescriptor<TortureItem>) {
            self.query = query
            self.descriptor = descriptor
            let applied = Copy()
            self.applied = applied
            // Observed first, then copied under the copy's lock: a commit published between a
            // copy and the observer's start would otherwise be in neither. A change the copy
            // already holds (its commit at or before the copy's) is skipped; one delivered
            // before the copy is taken was published before it, so the copy holds it.
            observation = query.observe(on: queue) { change in
                applied.state.withLock { state in
                    guard let current = state, change.sequence > current.sequence else { return }
                    state = (change.apply(to: current.items), change.sequence)
                }
            }
            applied.state.withLock { state in
                let results = query.results
                state = (Array(results), results.sequence)
            }
        }

        /// Brings the query up to the last commit and compares it with a fresh fetch and with the
        /// copy its changes built; nil when all three agree.
        func compare(with context: ModelContext) -> String? {
            var problem: String?
            // The changes may still be on their way to the copy: look again a few times.
            for _ in 0..<50 {
                do {
                    try query.catchUp()
                    queue.sync {}
                    let live = Array(query)
                    let fetched = try context.fetch(descriptor)
                    let copy = applied.items
                    if live != fetched {
                        problem = "a live query holds \(describe(live)), a fresh fetch \(describe(fetched))"
                    } else if copy != live {
                        problem = "a live query's changes built \(describe(copy)), its results are \(describe(live))"
                    } else {
                        return nil
                    }
                } catch {
                    problem = "a live query failed: \(error)"
                }
                usleep(20_000)
            }
            return problem
        }

        private func describe(_ items: [TortureItem]) -> String {
            "[" + items.prefix(10).map { "\($0.id)#\($0.number)" }.joined(separator: ", ") + "]"
        }
    }
}
