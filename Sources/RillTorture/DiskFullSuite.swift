import Foundation
import Rill
import RillWorkloads

#if canImport(Glibc)
    import Glibc
#endif

/// The `disk-full` suite: the store on a small file system, filled until saves fail, then freed.
///
/// The store lives on a loop-mounted ext4 image (a size-limited tmpfs where loop devices are not
/// available; the suite skips, saying why, only where neither can be mounted). A `rill serve` of
/// the same store runs throughout. Each fill-and-free cycle (20 at `.torture`, 5 at `.test`):
///
/// 1. places a filler file beside the store, when it is not there;
/// 2. saves items of 1–64 KiB until a save fails; it must fail with `diskFull` (LMDB reports a
///    short write as `EIO`, which is `diskFull` too), and leave the store as it was (same head, the
///    item absent);
/// 3. reads go on: a count, an indexed query, a get, and a live query equal to a fresh fetch;
/// 4. a save of 512 KiB through the daemon is answered 507 `diskFull`, and the daemon still
///    answers `/v1/health`;
/// 5. frees space: removes the filler. (Deleting records would not: the log keeps each deleted
///    record's last state, so a delete adds to the file what it frees in the projection, and on a
///    full disk it fails like any save. Only a compaction, `rill compact`, gives log space back.)
/// 6. saves resume, in this process and through the daemon, with no restart of either;
/// 7. ends with `StoreVerification`.
package enum DiskFullSuite {
    package static func run(_ options: TortureOptions) throws -> TortureReport {
        var report = TortureReport(suite: "disk-full", seed: options.seed)
        let work = try options.directory("disk-full")
        let fileSystem: SmallFileSystem
        do {
            fileSystem = try SmallFileSystem.mount(
                at: work.appendingPathComponent("fs"), bytes: options.scale.pick(test: 12 << 20, torture: 32 << 20),
                image: work.appendingPathComponent("fs.img"))
        } catch {
            report.skipped = "\(error)"
            try? FileManager.default.removeItem(at: work)
            return report
        }
        report.add("file system", fileSystem.kind)
        do {
            var run = try Run(options: options, fileSystem: fileSystem, work: work)
            try run.cycles(options.scale.pick(test: 5, torture: 20), into: &report)
            run.stop(into: &report)
        } catch {
            report.problems.append("the suite stopped: \(error)")
        }
        fileSystem.unmount()
        if report.passed { try? FileManager.default.removeItem(at: work) }
        return report
    }

    /// The store, its daemon and what was acknowledged, for the cycles of one run.
    struct Run {
        let store: URL
        let filler: URL
        let socket: String
        let container: ModelContainer
        let context: ModelContext
        let daemon: Process
        let daemonLog: URL
        var live: LiveQuery<TortureItem>
        var random: SeededGenerator
        var acknowledged: [AcknowledgedSave] = []
        var items: [String] = []
        var number = 0
        /// The free space each filler leaves: about what each fill adds to the store.
        let headroom: Int

        init(options: TortureOptions, fileSystem: SmallFileSystem, work: URL) throws {
            store = fileSystem.directory.appendingPathComponent("store")
            filler = fileSystem.directory.appendingPathComponent("filler")
            socket = work.appendingPathComponent("rill.sock").path
            headroom = options.scale.pick(test: 512 << 10, torture: 1 << 20)
            random = SeededGenerator(seed: options.seed)
            container = try ModelContainer(
                for: TortureItem.self, configurations: ModelConfiguration(url: store, initialMapSize: 64 << 20))
            context = ModelContext(container)
            var low = FetchDescriptor<TortureItem>(
                predicate: #Predicate { $0.number < 30 }, sortBy: [SortDescriptor(\.number)])
            low.fetchLimit = 30
            live = try LiveQuery(low, in: container)
            // The daemon needs the entity to exist: one save first.
            daemonLog = work.appendingPathComponent("daemon.log")
            daemon = Process()
            try save(payload: 100)
            _ = FileManager.default.createFile(atPath: daemonLog.path, contents: nil)
            daemon.executableURL = URL(fileURLWithPath: options.product("rill"))
            daemon.arguments = ["serve", store.path, "--socket", socket]
            daemon.standardOutput = FileHandle.nullDevice
            daemon.standardError = try FileHandle(forWritingTo: daemonLog)
            try daemon.run()
            let deadline = Date().addingTimeInterval(20)
            while DaemonRequest.send(socket: socket, "GET", "/v1/health")?.status != 200 {
                guard Date() < deadline, daemon.isRunning else {
                    throw TortureUsage("rill serve did not start: \(log)")
                }
                usleep(20_000)
            }
        }

        var log: String { (try? String(contentsOf: daemonLog, encoding: .utf8)) ?? "" }

        /// Saves one new item with a payload of `payload` bytes and records it as acknowledged.
        mutating func save(payload: Int) throws {
            let id = "d-\(number)"
            context.insert(
                TortureItem(
                    id: id, writer: 0, number: number,
                    payload: TortureWriter.text(in: payload...payload, using: &random)))
            number += 1
            guard let sequence = try context.save() else { throw TortureUsage("a save wrote no commit") }
            acknowledged.append(acknowledgement(sequence, [id]))
            items.append(id)
        }

        func acknowledgement(_ sequence: UInt64, _ ids: [String], delete: Bool = false) -> AcknowledgedSave {
            AcknowledgedSave(
                sequence: sequence,
                changes: ids.map {
                    .init(entity: TortureItem.entityName, key: AnyIdentifier.string($0).storageKey, isDelete: delete)
                })
        }

        mutating func cycles(_ count: Int, into report: inout TortureReport) throws {
            var fillSaves = 0
            for cycle in 0..<count {
                let moment = "cycle \(cycle + 1)"
                placeFiller()
                fillSaves += try fill(moment, into: &report)
                checkReads(moment, into: &report)
                try checkDaemonRefuses(moment, into: &report)
                try? FileManager.default.removeItem(at: filler)
                try resume(moment, into: &report)
                report.faults += 1
                report.record(StoreVerification.verify(directory: store.path, acknowledged: acknowledged), at: moment)
            }
            report.acknowledged = acknowledged.count
            report.add("saves until full", fillSaves)
            report.add("file MiB", TortureWriter.fileSize(store.appendingPathComponent("data.mdb").path) >> 20)
        }

        /// Writes the filler file anew, taking all the free space but `headroom` bytes: each fill
        /// then adds about that much to the store, so that the cycles do not run out of space
        /// to free.
        func placeFiller() {
            try? FileManager.default.removeItem(at: filler)
            var info = statvfs()
            guard statvfs(filler.deletingLastPathComponent().path, &info) == 0 else { return }
            let size = Int(info.f_bavail) * Int(info.f_frsize) - headroom
            let fd = open(filler.path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o600)
            guard fd >= 0 else { return }
            defer { close(fd) }
            let chunk = [UInt8](repeating: 0x5A, count: 64 << 10)
            var written = 0
            while written < size {
                let count = chunk.withUnsafeBytes { Glibc.write(fd, $0.baseAddress, $0.count) }
                if count <= 0 { break }
                written += count
            }
            fsync(fd)
        }

        /// Saves until a save fails; checks that it failed with `diskFull` and changed nothing.
        /// Returns how many saves succeeded.
        mutating func fill(_ moment: String, into report: inout TortureReport) throws -> Int {
            var saves = 0
            while true {
                let head = try container.lastSequence()
                let size = Int.random(in: 1 << 10...64 << 10, using: &random)
                let id = "d-\(number)"
                do {
                    try save(payload: size)
                    saves += 1
                    if saves > 100_000 {
                        report.problems.append("\(moment): 100,000 saves and the disk is not full")
                        return saves
                    }
                } catch let error as RillError {
                    context.rollback()
                    if error.code != .diskFull || !error.message.contains("full") {
                        report.problems.append("\(moment): a save on a full disk failed with \(error), not diskFull")
                    }
                    if try container.lastSequence() != head {
                        report.problems.append("\(moment): the failed save changed the log's head")
                    }
                    if try context.model(TortureItem.self, id: id) != nil {
                        report.problems.append("\(moment): the item of the failed save is in the store")
                    }
                    return saves
                }
            }
        }

        /// Reads on the full disk: a count, an indexed query, a get, the live query.
        func checkReads(_ moment: String, into report: inout TortureReport) {
            do {
                let all = try context.fetchCount(FetchDescriptor<TortureItem>())
                let mine = try context.fetchCount(
                    FetchDescriptor<TortureItem>(predicate: #Predicate { $0.writer == 0 }))
                if all != items.count || mine != items.count {
                    report.problems.append("\(moment): \(all) items (\(mine) by index), \(items.count) expected")
                }
                if let id = items.last, try context.model(TortureItem.self, id: id) == nil {
                    report.problems.append("\(moment): item \(id) cannot be read on the full disk")
                }
                try live.catchUp()
                let fetched = try context.fetch(live.descriptor)
                if let error = live.error { report.problems.append("\(moment): the live query failed: \(error)") }
                if Array(live) != fetched {
                    report.problems.append("\(moment): the live query differs from a fresh fetch on the full disk")
                }
            } catch {
                report.problems.append("\(moment): a read on the full disk failed: \(error)")
            }
        }

        /// A large save through the daemon: 507 `diskFull`, and the daemon goes on serving.
        func checkDaemonRefuses(_ moment: String, into report: inout TortureReport) throws {
            let head = try container.lastSequence()
            let payload = String(repeating: "z", count: 512 << 10)
            let body =
                #"{"changes":[{"op":"insert","entity":"TortureItem","record":{"id":"daemon-full","writer":9,"#
                + #""number":0,"payload":"\#(payload)"}}]}"#
            let response = DaemonRequest.send(socket: socket, "POST", "/v1/save", body: body)
            if response?.status != 507 || !(response?.body.contains("diskFull") ?? false) {
                report.problems.append(
                    "\(moment): a save through the daemon on a full disk got \(response.map { "\($0.status) \($0.body)" } ?? "no answer"), not 507 diskFull"
                )
            }
            if DaemonRequest.send(socket: socket, "GET", "/v1/health")?.status != 200 {
                report.problems.append("\(moment): the daemon stopped answering on a full disk")
            }
            if try container.lastSequence() != head {
                report.problems.append("\(moment): the daemon's failed save changed the log's head")
            }
        }

        /// Saves go on once space is free: in this process and through the daemon.
        mutating func resume(_ moment: String, into report: inout TortureReport) throws {
            do {
                try save(payload: 4 << 10)
            } catch {
                report.problems.append("\(moment): a save after space was freed failed: \(error)")
            }
            let id = "daemon-\(number)"
            let body =
                #"{"changes":[{"op":"insert","entity":"TortureItem","record":{"id":"\#(id)","writer":0,"#
                + #""number":\#(number),"payload":"resumed"}}]}"#
            number += 1
            let response = DaemonRequest.send(socket: socket, "POST", "/v1/save", body: body)
            guard let response, response.status == 200,
                let sequence = response.body.split(whereSeparator: { !$0.isNumber }).first.flatMap({ UInt64($0) })
            else {
                report.problems.append(
                    "\(moment): a save through the daemon after space was freed got "
                        + (response.map { "\($0.status) \($0.body)" } ?? "no answer"))
                return
            }
            acknowledged.append(acknowledgement(sequence, [id]))
            items.append(id)
        }

        /// Stops the daemon: it must have kept running through every cycle, and end cleanly.
        func stop(into report: inout TortureReport) {
            guard daemon.isRunning else {
                report.problems.append("the daemon exited during the cycles: \(log)")
                return
            }
            kill(daemon.processIdentifier, SIGTERM)
            daemon.waitUntilExit()
            if daemon.terminationStatus != 0 {
                report.problems.append("the daemon exited with status \(daemon.terminationStatus): \(log)")
            }
        }
    }
}
