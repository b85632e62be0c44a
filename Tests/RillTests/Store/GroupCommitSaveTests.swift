import Foundation
// RillLocks' `Lock` guards the threads' shared state: ThreadSanitizer sees it (`make tsan`).
import RillLocks
import RillStorage
import RillTestSupport
import RillWorkloads
import Testing

@testable import Rill

/// Saves from many threads at once share write transactions (group commit), and each stays a
/// save of its own: one log entry each, in a gapless log, atomic, and failing alone.
@Suite struct GroupCommitSaveTests {
    let directory = TemporaryDirectory()

    struct Member: PersistentModel, Equatable {
        var id: Int
        var email: String
        var thread: Int
        static let indexes: [ModelIndex<Member>] = [.unique(\.email, onConflict: .fail), .init(\.thread)]
    }

    @Test func concurrentSavesAreEachOneCommitAndAFailedOneWritesNothing() throws {
        let seed = SeededGenerator(label: "GroupCommitSaveTests").seed
        let container = try ModelContainer(
            for: [Member.self], configurations: [ModelConfiguration(url: directory.url.appendingPathComponent("store"))]
        )
        let (threads, saves) = (12, 25)
        // Each save inserts 3 members; emails come from a small pool, so that saves of different
        // threads collide on the unique index and the later one fails.
        let outcomes = Lock<[(thread: Int, members: [Member], sequence: UInt64?)]>([])
        let group = DispatchGroup()
        for thread in 0..<threads {
            group.enter()
            Thread {
                var random = SeededGenerator(seed: seed &+ UInt64(thread))
                let context = ModelContext(container)
                for save in 0..<saves {
                    let members = (0..<3).map { index in
                        Member(
                            id: thread * 10_000 + save * 10 + index, email: "m\(random.next() % 4_000)@example.com",
                            thread: thread)
                    }
                    for member in members { context.insert(member) }
                    let sequence: UInt64?
                    do {
                        sequence = try context.save()
                    } catch {
                        context.rollback()
                        sequence = nil
                    }
                    outcomes.withLock { $0.append((thread, members, sequence)) }
                }
                group.leave()
            }.start()
        }
        group.wait()
        let all = outcomes.withLock { $0 }
        let saved = all.filter { $0.sequence != nil }
        let failed = all.filter { $0.sequence == nil }
        print("GroupCommitSaveTests: \(saved.count) saves committed, \(failed.count) refused")
        #expect(!saved.isEmpty && !failed.isEmpty, "the email pool makes some saves collide and most succeed")

        // One log entry per committed save, gapless, each holding exactly that save's members.
        let store = container.store
        let entries = try store.entries(after: 0)
        #expect(entries.map(\.sequence) == Array(1...UInt64(saved.count)))
        let bySequence = Dictionary(uniqueKeysWithValues: saved.map { ($0.sequence!, $0.members) })
        for entry in entries {
            let members = try #require(bySequence[entry.sequence])
            #expect(entry.changes.map(\.key) == members.map(\.id.storageKey))
        }
        // The committed members are stored, the refused ones are not, and emails are unique.
        let context = ModelContext(container)
        let stored = try context.fetch(FetchDescriptor<Member>(sortBy: [SortDescriptor(\.id)]))
        #expect(stored == saved.flatMap(\.members).sorted { $0.id < $1.id })
        #expect(Set(stored.map(\.email)).count == stored.count)
        // The projections and indexes equal a replay of the log.
        let audit = try StoreAudit(directory: directory.url.appendingPathComponent("store").path)
        #expect(audit.replayed == audit.projected)
        #expect(audit.indexesMatch.values.allSatisfy { $0 })
        #expect(try store.check().problems.isEmpty)
    }

    @Test func savesQueuedBehindABusyWriterShareOneTransaction() throws {
        let container = try ModelContainer(
            for: [Member.self], configurations: [ModelConfiguration(url: directory.url.appendingPathComponent("busy"))])
        let store = container.store
        let before = store.environment.lastTransactionID
        // Hold the writer thread, so that the saves below queue up behind it.
        let started = DispatchSemaphore(value: 0)
        let blocker = Thread {
            try? store.environment.write { txn in
                try txn.put([1], for: [1], in: try txn.database(named: "scratch", create: true)!)
                started.signal()
                usleep(300_000)
            }
        }
        blocker.start()
        started.wait()
        let group = DispatchGroup()
        for thread in 0..<16 {
            group.enter()
            Thread {
                let context = ModelContext(container)
                context.insert(Member(id: thread, email: "m\(thread)@example.com", thread: thread))
                _ = try? context.save()
                group.leave()
            }.start()
        }
        group.wait()
        #expect(try store.head() == 16)
        let transactions = store.environment.lastTransactionID - before - 1
        #expect(transactions <= 4, "16 saves queued together took \(transactions) transactions")
    }
}
