import Foundation
import RillTestSupport
import Testing

@testable import Rill

/// The log as a component: commits read forwards and backwards in one snapshot, and watches
/// woken by the commits of this process, whichever `Store` of the file made them.
@Suite struct LogTests {
    let directory = TemporaryDirectory()

    /// A store with `count` commits, one record each.
    func store(commits count: Int, at name: String = "store") throws -> Store {
        let store = try Store(directory: directory.path(name), options: StoreOptions(), create: true)
        let entity = try store.registerEntity(named: "Item", identifierKind: .integer)
        for number in 0..<count {
            let record = RecordValue.map([RecordField(name: "n", value: .int(Int64(number)))])
            _ = try store.commit(
                [PreparedChange(entity: entity, key: number.storageKey, operation: .upsert(record.recordBytes()))],
                author: nil)
        }
        return store
    }

    @Test func commitsAreReadForwardsAndBackwardsInOneSnapshot() throws {
        let store = try store(commits: 5)
        try store.read { snapshot in
            #expect(try store.log.head(in: snapshot) == 5)
            #expect(try store.log.entryCount(in: snapshot) == 5)
            #expect(try store.log.entries(after: 2, limit: 2, in: snapshot).map(\.sequence) == [3, 4])
            #expect(try store.log.entries(after: 5, in: snapshot).isEmpty)
            var before: [UInt64] = []
            try store.log.forEachEntry(before: 4, in: snapshot) { entry in
                before.append(entry.sequence)
                return true
            }
            #expect(before == [3, 2, 1])
            var all: [UInt64] = []
            try store.log.forEachEntry(before: 99, in: snapshot) { entry in
                all.append(entry.sequence)
                return all.count < 2
            }
            #expect(all == [5, 4], "a sequence past the head starts at the last commit; false stops the walk")
            var none = 0
            try store.log.forEachEntry(before: 1, in: snapshot) { _ in
                none += 1
                return true
            }
            #expect(none == 0)
        }
    }

    @Test func aCommitWakesTheWatchesOfItsFileWhateverStoreMadeThem() throws {
        let writer = try store(commits: 1)
        let reader = try Store(directory: directory.path("store"), options: StoreOptions(readOnly: true), create: false)
        let watch = try reader.log.watch()
        defer { watch.close() }
        let entity = try #require(try writer.entity(named: "Item"))
        let record = RecordValue.map([RecordField(name: "n", value: .int(9))])
        _ = try writer.commit(
            [PreparedChange(entity: entity, key: 9.storageKey, operation: .upsert(record.recordBytes()))], author: nil)
        // The wake-up is pending: the wait returns at once, not after its bound of a second.
        let started = Date()
        watch.wait()
        #expect(Date().timeIntervalSince(started) < 0.5)
        #expect(try reader.head() == 2)
    }

    @Test func coalescedWakeUpsAreNeverLost() throws {
        let store = try store(commits: 1)
        let watch = try store.log.watch()
        defer { watch.close() }
        // Posts meeting before the watch drains its pipe write one byte; the next post after a
        // wait writes again. Were a wake-up lost, a wait would last its bound of a second.
        var slowest = 0.0
        for round in 0..<200 {
            let posters = round % 4 == 0 ? 8 : 1
            DispatchQueue.concurrentPerform(iterations: posters) { _ in watch.wake() }
            let started = Date()
            watch.wait()
            slowest = max(slowest, Date().timeIntervalSince(started))
        }
        #expect(slowest < 0.5, "the slowest wait after a wake-up took \(slowest) s")
    }

    @Test func aClosedWatchIsNoLongerWoken() throws {
        let store = try store(commits: 1)
        let watch = try store.log.watch()
        watch.close()
        watch.close()
        watch.wake()
        let entity = try #require(try store.entity(named: "Item"))
        let record = RecordValue.map([RecordField(name: "n", value: .int(2))])
        _ = try store.commit(
            [PreparedChange(entity: entity, key: 2.storageKey, operation: .upsert(record.recordBytes()))], author: nil)
        #expect(try store.head() == 2)
    }
}
