import Foundation
import RillStorage
import RillTestSupport
import RillWorkloads
import Testing

@testable import Rill

/// Store files damaged on disk — cut short, with flipped bytes in log keys — and a full disk at
/// store creation: each gives a typed error naming the file, never a trap or a signal.
@Suite struct DamagedStoreTests {
    let directory = TemporaryDirectory()

    /// Creates and closes a store of `records` Counters, one save each; returns its directory.
    func makeStore(_ name: String, records: Int, payload: Int) throws -> String {
        let path = directory.path(name)
        let container = try ModelContainer(
            for: Counter.self, configurations: ModelConfiguration(url: URL(fileURLWithPath: path)))
        let context = ModelContext(container)
        for id in 0..<records {
            context.insert(Counter(id: id, value: id, payload: String(repeating: "p", count: payload)))
            try context.save()
        }
        return path
    }

    /// A new store directory holding `data` as its `data.mdb`.
    func copy(_ data: Data, as name: String) throws -> String {
        let path = directory.path(name)
        try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: false)
        try data.write(to: URL(fileURLWithPath: path + "/data.mdb"))
        return path
    }

    /// LMDB's page size, as recorded in the first meta page (`md_pad` of the free database).
    func pageSize(of data: Data) -> Int {
        (40..<44).reversed().reduce(0) { $0 << 8 | Int(data[data.startIndex + $1]) }
    }

    @Test func fileCutShortAtAnyPageBoundaryIsATypedErrorNamingTheFile() throws {
        let path = try makeStore("store", records: 40, payload: 600)
        let data = try Data(contentsOf: URL(fileURLWithPath: path + "/data.mdb"))
        let pageSize = pageSize(of: data)
        let pages = data.count / pageSize
        #expect(pageSize >= 512 && data.count % pageSize == 0)
        #expect(pages > 8)
        for page in 0..<pages {
            let cut = try copy(data.prefix(page * pageSize), as: "cut-\(page)")
            for command in ["stats", "check", "query"] {
                let arguments = command == "query" ? [command, cut, "Counter"] : [command, cut]
                let run = try runBuilt("rill", arguments)
                #expect(run.status == 1, "rill \(command), file cut after \(page) pages: status \(run.status)")
                #expect(run.error.contains(cut + "/data.mdb"), "rill \(command), cut after \(page): \(run.error)")
            }
            let error = #expect(throws: RillError.self, "cut after \(page) pages") {
                _ = try Store(directory: cut, options: StoreOptions(), create: false)
            }
            // An empty data.mdb is also what a process killed while LMDB created the file leaves: no store yet.
            let expected: RillError.Code = page == 0 ? .storeNotFound : .corruptStore
            #expect(error?.code == expected, "cut after \(page) pages: \(String(describing: error))")
            #expect(error?.message.contains(cut + "/data.mdb") == true)
            #expect(try Data(contentsOf: URL(fileURLWithPath: cut + "/data.mdb")).count == page * pageSize)
        }
        // The whole file, and a file with pages to spare past its last one, are fine.
        var longer = data
        longer.append(Data(count: pageSize))
        for whole in [try copy(data, as: "whole"), try copy(longer, as: "longer")] {
            let run = try runBuilt("rill", ["check", whole])
            #expect(run.status == 0, "\(run.error)")
        }
    }

    @Test func logKeyOfTheLargestSequenceIsReportedAndRefusesTheNextCommit() throws {
        let path = try makeStore("store", records: 5, payload: 10)
        let store = try Store(directory: path, options: StoreOptions(), create: false)
        let log = store.log.database
        try store.withWriteTransaction { txn in
            let moved = try #require(try txn.get(LogEntry.key(for: 5), in: log)).map { $0 }
            try txn.delete(LogEntry.key(for: 5), in: log)
            try txn.put(moved, for: LogEntry.key(for: .max), in: log)
        }
        let report = try store.check()
        #expect(!report.isHealthy)
        #expect(report.commits == 5)
        #expect(report.problems.contains { $0.contains("from commit 4 to \(UInt64.max)") }, "\(report.problems)")
        let context = ModelContext(
            try ModelContainer(for: Counter.self, configurations: ModelConfiguration(url: URL(fileURLWithPath: path))))
        context.insert(Counter(id: 99, value: 1))
        let error = #expect(throws: RillError.self) { try context.save() }
        #expect(error?.code == .corruptStore)
        #expect(error?.message.contains(path + "/data.mdb") == true)
        for arguments in [["check", path], ["insert", path, "Counter", #"{"id":99,"value":1,"payload":""}"#]] {
            let run = try runBuilt("rill", arguments)
            #expect(run.status == 1, "rill \(arguments[0]): status \(run.status): \(run.error)")
        }
    }

    @Test func flippedBitsInLogKeysOnDiskNeverTrap() throws {
        var random = SeededGenerator(label: "flippedBitsInLogKeysOnDiskNeverTrap")
        let path = try makeStore("store", records: 12, payload: 10)
        let data = try Data(contentsOf: URL(fileURLWithPath: path + "/data.mdb"))
        for round in 0..<16 {
            // A log entry's leaf node: key size 8 (little-endian), the big-endian sequence, then
            // the entry, which starts with its format version.
            let sequence = UInt64.random(in: 1...12, using: &random)
            let pattern = Data([8, 0] + LogEntry.key(for: sequence) + [LogEntry.formatVersion])
            // Earlier versions of the page (copies made on write) hold the key too: damage each.
            var found: [Int] = []
            var start = data.startIndex
            while let range = data.range(of: pattern, in: start..<data.endIndex) {
                found.append(range.lowerBound + 2)
                start = range.upperBound
            }
            try #require(!found.isEmpty, "commit \(sequence) in the file")
            var damaged = data
            let offset = Int.random(in: 0..<8, using: &random)
            let bit = UInt8(1) << UInt8.random(in: 0..<8, using: &random)
            for key in found {
                // The last round sets the whole key to the largest sequence number.
                if round == 15 {
                    for index in key..<key + 8 { damaged[index] = 0xFF }
                } else {
                    damaged[key + offset] ^= bit
                }
            }
            let store = try copy(damaged, as: "flip-\(round)")
            let check = try runBuilt("rill", ["check", store])
            #expect(check.status == 1, "round \(round), commit \(sequence): \(check.status) \(check.output)")
            let insert = try runBuilt("rill", ["insert", store, "Counter", #"{"id":99,"value":1,"payload":""}"#])
            #expect(insert.status == 0 || insert.status == 1, "round \(round): \(insert.status) \(insert.error)")
            // A bounded read: before, a damaged key sent the log's reader round in circles.
            let log = try runBuilt("rill", ["log", store, "--limit", "100"])
            #expect(log.status == 0 || log.status == 1, "round \(round): \(log.status) \(log.error)")
            let printed = log.output.split(separator: "\n").compactMap {
                (try? JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any])?["seq"] as? Int
            }
            #expect(printed == printed.sorted() && Set(printed).count == printed.count, "round \(round): \(printed)")
        }
    }

    @Test func damagedStoredBytesAreErrorsForEveryReader() throws {
        var random = SeededGenerator(label: "damagedStoredBytesAreErrorsForEveryReader")
        let path = directory.path("store")
        let container = try ModelContainer(
            for: Gadget.self, configurations: ModelConfiguration(url: URL(fileURLWithPath: path)))
        let context = ModelContext(container)
        for id in 0..<40 { context.insert(Gadget.random(id: id, using: &random)) }
        try context.save()
        for id in 0..<40 where id % 3 == 0 { context.insert(Gadget.random(id: id, using: &random)) }
        try context.save()
        let store = container.store
        let entity = try #require(try store.entity(named: "Gadget"))
        func damage(_ bytes: [UInt8]) -> [UInt8] {
            var bytes = bytes
            if bytes.isEmpty { return [UInt8.random(in: 0...255, using: &random)] }
            switch Int.random(in: 0..<4, using: &random) {
            case 0: bytes.removeLast(Int.random(in: 1...bytes.count, using: &random))
            case 1: bytes[Int.random(in: 0..<bytes.count, using: &random)] = .max
            default:
                for _ in 0..<Int.random(in: 1...3, using: &random) {
                    bytes[Int.random(in: 0..<bytes.count, using: &random)] ^= UInt8.random(in: 1...255, using: &random)
                }
            }
            return bytes
        }
        let (log, records) = (store.log.database, entity.database)
        let logValues = try store.entries(after: 0, limit: 2).map(\.encoded)
        var recordValues: [[UInt8]] = []
        var indexKeys: [[UInt8]] = []
        try store.forEachRecord(of: entity) { _, record in
            recordValues.append(Array(record))
            return true
        }
        try store.read { snapshot in
            for index in entity.indexes {
                try snapshot.forEachEntry(of: index) { key, _ in
                    indexKeys.append(Array(key))
                    return true
                }
            }
        }
        // Each decoder on damaged bytes: a thrown error or a value, never a trap.
        for _ in 0..<2_000 {
            let entry = damage(logValues.randomElement(using: &random)!)
            _ = try? entry.withUnsafeBytes { try LogEntry(sequence: 1, bytes: $0) }
            let record = damage(recordValues.randomElement(using: &random)!)
            _ = try? record.withUnsafeBytes { try RecordValue(record: $0) }
            _ = try? RecordCoder.decode(Gadget.self, from: record)
            let key = damage(indexKeys.randomElement(using: &random)!)
            key.withUnsafeBytes { raw in
                var offset = 0
                while offset < raw.count, (try? IndexKey.decode(raw, offset: &offset)) != nil {}
                _ = AnyIdentifier(storageKey: UnsafeRawBufferPointer(rebasing: raw[min(offset, raw.count)...]))
            }
        }
        // Damaged records and log entries in the store: every reader gives an answer or a
        // typed error.
        var stored: [([UInt8], [UInt8])] = []
        try store.forEachRecord(of: entity) { key, record in
            stored.append((Array(key), Array(record)))
            return true
        }
        let damaged = stored.enumerated().filter { $0.offset % 4 == 0 }.map { ($0.element.0, damage($0.element.1)) }
        let damagedEntry = damage(logValues[1])
        try store.withWriteTransaction { txn in
            for (key, value) in damaged { try txn.put(value, for: key, in: records) }
            try txn.put(damagedEntry, for: LogEntry.key(for: 2), in: log)
        }
        // The check reports the damage rather than stopping at it.
        let report = try store.check()
        #expect(!report.isHealthy)
        _ = try? context.fetch(FetchDescriptor<Gadget>(predicate: #Predicate { $0.stock > 10 }))
        _ = try? store.run(QueryParser.parse("Gadget where price > 10 sort by name"))
        _ = try? store.entries(after: 0)
        for arguments in [
            ["check", path], ["export", path], ["query", path, "Gadget where stock > 3"], ["log", path],
        ] {
            let run = try runBuilt("rill", arguments)
            #expect(run.status == 0 || run.status == 1, "rill \(arguments[0]): status \(run.status) \(run.error)")
        }
    }

    @Test func fullDiskAtStoreCreationIsAnErrorAndLeavesNothing() throws {
        let outcome = try createOnFullDisk(options: "size=256k")
        #expect(outcome.created.hasPrefix("error diskFull"), "\(outcome.created)")
        #expect(outcome.created.contains("lock.mdb") || outcome.created.contains("data.mdb"), "\(outcome.created)")
        #expect(outcome.left.isEmpty, "left behind: \(outcome.left)")
    }

    @Test func noRoomForTheStoreDirectoryIsDiskFullNotPermission() throws {
        // No inode left: the directory itself cannot be made.
        let outcome = try createOnFullDisk(options: "size=256k,nr_inodes=4")
        #expect(outcome.created.hasPrefix("error diskFull"), "\(outcome.created)")
        #expect(outcome.created.contains("No space left"), "\(outcome.created)")
        #expect(outcome.left.isEmpty, "left behind: \(outcome.left)")
    }

    /// Mounts a small tmpfs in a private mount namespace (so nothing outlives the test), fills
    /// it, and creates a store in it with the test helper: returns the helper's line and what is
    /// left in the file system after the attempt (besides the filler). The test is cancelled, with
    /// the reason, where the mount is not allowed (it needs root or user namespaces).
    func createOnFullDisk(options: String) throws -> (created: String, left: [String]) {
        let mountPoint = directory.path("full")
        try FileManager.default.createDirectory(atPath: mountPoint, withIntermediateDirectories: false)
        let helper = buildProductsDirectory.appendingPathComponent("rill-test-helper").path
        let script = """
            mount -t tmpfs -o \(options) rill-full "$1" || { echo "skip: mount -t tmpfs failed"; exit 0; }
            i=0; while touch "$1/filler-$i" 2>/dev/null; do i=$((i+1)); [ $i -gt 64 ] && break; done
            head -c 1M /dev/zero > "$1/filler" 2>/dev/null
            "$2" create "$1/new/store"
            find "$1/new" 2>/dev/null
            """
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/unshare")
        process.arguments = ["--mount", "--propagation", "private", "sh", "-c", script, "sh", mountPoint, helper]
        let output = Pipe()
        let error = Pipe()
        process.standardOutput = output
        process.standardError = error
        do {
            try process.run()
        } catch {
            try Test.cancel("needs unshare(1) to mount a small tmpfs: \(error)")
        }
        let text = String(decoding: output.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        let problems = String(decoding: error.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        process.waitUntilExit()
        if process.terminationStatus != 0, text.isEmpty {
            try Test.cancel("cannot make a private mount namespace (needs root or user namespaces): \(problems)")
        }
        if text.hasPrefix("skip:") { try Test.cancel("\(text) \(problems)") }
        var lines = text.split(separator: "\n").map(String.init)
        let created = lines.isEmpty ? "" : lines.removeFirst()
        return (created, lines)
    }
}
