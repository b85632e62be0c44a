import Foundation
import Rill
import RillTestSupport
import RillWorkloads
import Testing

/// A watch of the log looks again shortly after a wake-up by the store file only when another
/// process's commit is in the file and not yet readable (LMDB publishes it in `lock.mdb` once its
/// meta-page write returns): never for this process's own commits, which it is told of, and
/// whose writes to the file do not wake its owner one by one.
@Suite struct CommitPublicationTests {
    let directory = TemporaryDirectory()

    func open(_ path: String) throws -> (ModelContainer, Store) {
        let container = try ModelContainer(
            for: Counter.self, configurations: ModelConfiguration(url: URL(fileURLWithPath: path)))
        return (container, try Store(directory: path, options: StoreOptions(), create: false))
    }

    @Test func thisProcesssOwnCommitsNeitherCallForASecondLookNorWakeForEachWrite() throws {
        let (container, store) = try open(directory.path("store"))
        let watch = try store.log.watch()
        defer { watch.close() }
        // Durable saves from another thread, while the watch wakes up on their writes to the
        // file, many of them in the middle of a commit (its meta page written, not yet published).
        let saving = DispatchGroup()
        saving.enter()
        DispatchQueue.global().async {
            let context = ModelContext(container)
            for id in 0..<300 {
                context.insert(Counter(id: id, value: id))
                do { try context.save() } catch { Issue.record(error) }
            }
            saving.leave()
        }
        var wakeUps = 0
        var rechecks = 0
        while saving.wait(timeout: .now()) == .timedOut {
            watch.wait()
            wakeUps += 1
            if watch.isRechecking { rechecks += 1 }
        }
        #expect(wakeUps > 0)
        // One wake-up a save (its post), or two when the follower looks at the file only after
        // the commit: not one for each of a commit's writes to the file.
        #expect(wakeUps <= 2 * 300 + 2, "\(wakeUps) wake-ups for 300 saves")
        #expect(rechecks == 0, "\(rechecks) of \(wakeUps) wake-ups looked again for this process's own commits")
        #expect(try ModelContext(container).fetchCount(FetchDescriptor<Counter>()) == 300)
    }

    @Test func anotherProcesssCommitBeingPublishedCallsForASecondLook() throws {
        let path = directory.path("store")
        let (container, store) = try open(path)
        let context = ModelContext(container)
        context.insert(Counter(id: -1, value: 0))
        try context.save()
        let watch = try store.log.watch()
        defer { watch.close() }
        // The other process holds still for 300 ms after each synchronous write of the file:
        // in LMDB's durable mode, after each commit's meta-page write, before it publishes it.
        let writer = Process()
        writer.executableURL = buildProductsDirectory.appendingPathComponent("rill-test-helper")
        writer.arguments = ["write", path, "other", "3"]
        var environment = ProcessInfo.processInfo.environment
        environment["LD_PRELOAD"] = buildProductsDirectory.appendingPathComponent("libRillFaultShim.so").path
        environment["RILL_FAULT_FILES"] = "/store/data.mdb"
        environment["RILL_FAULT_STALL"] = "300"
        writer.environment = environment
        writer.standardOutput = FileHandle.nullDevice
        try writer.run()
        // Each time the watch starts looking again is a commit seen between its meta-page write
        // and its publishing.
        var episodes = 0
        var wasRechecking = false
        while writer.isRunning {
            watch.wait()
            if watch.isRechecking, !wasRechecking { episodes += 1 }
            wasRechecking = watch.isRechecking
        }
        writer.waitUntilExit()
        #expect(writer.terminationStatus == 0)
        #expect(episodes >= 3, "the watch began looking again \(episodes) times for the other process's 3 saves")
        #expect(try context.fetchCount(FetchDescriptor<Counter>()) == 4)
    }
}
