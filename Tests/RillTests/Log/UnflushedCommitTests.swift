import Foundation
import RillTestSupport
import RillWorkloads
import Synchronization
import Testing

@testable import Rill

/// Commits made without a flush mark the log until a flushed commit follows, whichever process
/// made them; an observer that finds the mark flushes before it tells of them.
@Suite struct UnflushedCommitTests {
    let directory = TemporaryDirectory()

    func save(_ count: Int, to path: String, durability: ModelConfiguration.Durability) throws -> UInt64 {
        let container = try ModelContainer(
            for: Counter.self,
            configurations: ModelConfiguration(url: URL(fileURLWithPath: path), durability: durability))
        let context = ModelContext(container)
        var last: UInt64 = 0
        for _ in 0..<count {
            context.insert(Counter(id: Int.random(in: 0..<1_000_000), value: 1))
            last = try #require(try context.save())
        }
        return last
    }

    func mark(of path: String) throws -> UInt64? {
        let store = try Store(directory: path, options: StoreOptions(), create: false)
        return try store.read { try store.log.firstUnflushed(in: $0) }
    }

    @Test(arguments: [ModelConfiguration.Durability.relaxed, .unsynced])
    func aCommitWithoutAFlushMarksTheLogUntilAFlushedOne(_ durability: ModelConfiguration.Durability) throws {
        let path = directory.path("store-\(durability)")
        #expect(try save(2, to: path, durability: .full) == 2)
        #expect(try mark(of: path) == nil)
        // The first unflushed commit is the one marked, however many follow it.
        #expect(try save(3, to: path, durability: durability) == 5)
        #expect(try mark(of: path) == 3)
        // Another process's flushed commit flushes every write before it: the mark goes.
        let child = try runBuilt("rill-test-helper", ["write", path, "flusher", "1"])
        #expect(child.status == 0, "\(child.error)")
        #expect(try mark(of: path) == nil)
        #expect(try save(1, to: path, durability: durability) == 7)
        #expect(try mark(of: path) == 7)
    }

    @Test func anObserverFlushesBeforeItTellsOfUnflushedCommits() throws {
        let path = directory.path("store")
        _ = try save(1, to: path, durability: .full)
        let store = try Store(directory: path, options: StoreOptions(durability: .unsynced), create: false)
        #expect(try store.read { try store.observableHead(in: $0) } == 1)
        #expect(store.flushedThrough.load(ordering: .relaxed) == 0, "nothing was due a flush")
        _ = try save(2, to: path, durability: .unsynced)
        #expect(try store.read { try store.observableHead(in: $0) } == 3)
        #expect(store.flushedThrough.load(ordering: .relaxed) == 3, "the observer flushed through the head")
    }
}
