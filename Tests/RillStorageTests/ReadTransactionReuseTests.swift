import Foundation
// RillLocks' `Lock` guards the threads' shared state: ThreadSanitizer sees it (`make tsan`).
import RillLocks
import Testing

@testable import RillStorage

/// Read transactions are reset when a read ends and renewed by the next one: each read must still
/// see every commit before it, a kept transaction must pin no snapshot, and the process must keep
/// only a few reader slots however many threads read.
@Suite struct ReadTransactionReuseTests: StorageTestSuite {
    let directory = URL(fileURLWithPath: NSTemporaryDirectory()).appendingPathComponent("rill-reuse-\(UUID())")

    @Test func eachReadSeesEveryCommitBeforeIt() throws {
        defer { try? FileManager.default.removeItem(at: directory) }
        let environment = try open()
        let things = try environment.database(named: "things", create: true)!
        for index in 0..<300 {
            try environment.write { try $0.put(Self.key(index), for: [0], in: things) }
            #expect(try environment.read { try $0.get([0], in: things).map(Array.init) } == Self.key(index))
        }
        // A database created after the kept transactions were first made is seen by them too.
        let later = try environment.database(named: "later", create: true)!
        try environment.write { try $0.put([9], for: [1], in: later) }
        for _ in 0..<20 {
            #expect(try environment.read { try $0.get([1], in: later).map(Array.init) } == [9])
        }
    }

    @Test func keptTransactionsPinNoSnapshot() throws {
        defer { try? FileManager.default.removeItem(at: directory) }
        let environment = try open(mapSize: 1 << 27)
        let things = try environment.database(named: "things", create: true)!
        let value = [UInt8](repeating: 7, count: 64 << 10)
        for round in 0..<300 {
            var changed = value
            changed[0] = UInt8(round % 256)
            try environment.write { try $0.put(changed, for: [0], in: things) }
            #expect(try environment.read { try $0.get([0], in: things)?.first } == UInt8(round % 256))
        }
        // 300 versions of a 64 KiB value: about 19 MiB if a kept transaction pinned the pages of
        // each, a few versions' worth when the freed pages are reused.
        let size = try FileManager.default.attributesOfItem(atPath: directory.path + "/data.mdb")[.size] as! Int
        #expect(size < 2 << 20, "data.mdb grew to \(size) bytes")
    }

    @Test func readsOnManyThreadsKeepFewSlots() throws {
        defer { try? FileManager.default.removeItem(at: directory) }
        let environment = try open()
        let things = try environment.database(named: "things", create: true)!
        try environment.write { try $0.put(Self.key(0), for: [0], in: things) }
        let failures = Lock(0)
        DispatchQueue.concurrentPerform(iterations: 16) { thread in
            var last = -1
            for step in 0..<200 {
                if thread == 0, step % 10 == 0 {
                    try? environment.write { try $0.put(Self.key(step), for: [0], in: things) }
                }
                let seen =
                    (try? environment.read { txn in
                        try txn.get([0], in: things).map { Int(UInt32(bigEndian: $0.loadUnaligned(as: UInt32.self))) }
                    }) ?? nil
                // Snapshots never go back in time on one thread.
                guard let seen, seen >= last else {
                    failures.withLock { $0 += 1 }
                    continue
                }
                last = seen
            }
        }
        #expect(failures.withLock { $0 } == 0)
        #expect(environment.openReadTransactionCount() == 0)
        let slots = environment.readerSlots().filter { $0.pid == getpid() }
        #expect(slots.count <= 8, "\(slots.count) reader slots kept by this process")
    }
}
