import Foundation
import Rill

#if canImport(Glibc)
    import Glibc
#endif

/// The `map-growth` suite: a store that starts with a 1 MiB map is written to 256 MiB (32 MiB at
/// `.test`) with values of 100 B to 1 MiB, while another process reads it and follows live queries.
///
/// The writer process (`worker writer --map-size 1048576 --payload 100-1048576 --payload-spread log
/// --until-size …`) hits `MDB_MAP_FULL` again and again; each time the storage layer doubles the
/// map and replays the save. The reader process (`worker map-reader`, opened with a 1 MiB map too)
/// adopts each grown map when LMDB reports `MDB_MAP_RESIZED`. Then:
///
/// - every save succeeded exactly once: the acknowledged commits are 1…n, each once, the log holds
///   exactly n commits, each with the one change its save made (a save applied twice by a replay
///   would show as a second commit or a second change), and the store's items are those a replay
///   of the acknowledged saves leaves;
/// - the reader read without an error, saw the last commit, ended with the grown map, and its live
///   queries equal a fresh fetch and the results their changes built;
/// - the store passes `StoreVerification`.
package enum MapGrowthSuite {
    package static func run(_ options: TortureOptions) throws -> TortureReport {
        var report = TortureReport(suite: "map-growth", seed: options.seed)
        let work = try options.directory("map-growth")
        let store = work.appendingPathComponent("store")
        let target = options.scale.pick(test: 32 << 20, torture: 256 << 20)
        let map = "\(1 << 20)"
        let torture = options.product("rill-torture")
        let first = try WorkerRun.run(
            torture, ["worker", "writer", store.path, "1", "--saves", "1", "--map-size", map, "--payload", "100-100"],
            in: work)
        guard first.status == 0 else { throw TortureUsage("creating the store failed: \(first.standardError)") }
        let stop = work.appendingPathComponent("stop")
        let reader = try WorkerRun.start(
            torture,
            ["worker", "map-reader", store.path, "--stop", stop.path, "--map-size", map, "--seed", "\(options.seed)"],
            in: work)
        let started = Date()
        let writer = try WorkerRun.run(
            torture,
            [
                "worker", "writer", store.path, "1", "--map-size", map, "--payload", "100-1048576", "--payload-spread",
                "log", "--until-size", "\(target)", "--seed", "\(options.seed)",
            ], in: work)
        let writing = Date().timeIntervalSince(started)
        let lines = first.lines + writer.lines
        let acknowledged = lines.compactMap(TortureWriter.acknowledged)
        let last = acknowledged.map(\.sequence).max() ?? 0
        try "\(last)\n".write(to: stop, atomically: true, encoding: .utf8)
        let read = reader.wait()
        report.acknowledged = acknowledged.count
        if writer.status != 0 {
            report.problems.append("the writer exited with status \(writer.status): \(writer.standardError)")
        }
        if acknowledged.map(\.sequence).sorted() != Array(1...UInt64(max(1, acknowledged.count))) {
            report.problems.append("the acknowledged commits are not 1…\(acknowledged.count), each once")
        }
        let found = StoreVerification.verify(directory: store.path, acknowledged: acknowledged)
        report.lost = found.filter { $0.contains("acknowledged") }.count
        report.record(found, at: "after the writer")
        try checkLog(store: store.path, lines: lines, saves: acknowledged.count, into: &report)
        let mapSize = recordedMapSize(store.appendingPathComponent("data.mdb").path)
        checkReader(read, last: last, mapSize: mapSize, into: &report)
        let growths = mapSize > 0 ? Int(log2(Double(mapSize) / Double(1 << 20)).rounded()) : 0
        report.faults = growths
        report.add("file MiB", TortureWriter.fileSize(store.appendingPathComponent("data.mdb").path) >> 20)
        report.add("map MiB", mapSize >> 20)
        report.add("map growths", growths)
        report.add("saves/s", Int(Double(acknowledged.count) / max(writing, 0.001)))
        if let done = read.lines.last(where: { $0.hasPrefix("done ") }) { report.add("reader", done.dropFirst(5)) }
        if report.passed { try? FileManager.default.removeItem(at: work) }
        return report
    }

    /// The map size the newest meta page of `data.mdb` records: what the writer grew it to.
    ///
    /// Opening the store would not tell: LMDB maps an explicitly given size, raised only to what
    /// the data needs, not to the size recorded. The layout is LMDB's (64-bit, data version 1):
    /// a 16-byte page header, then `MDB_meta`, whose map size is at byte 16 and transaction id
    /// at byte 128; the first `MDB_db`'s pad (byte 24) holds the page size.
    static func recordedMapSize(_ path: String) -> Int {
        let fd = open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { return 0 }
        defer { close(fd) }
        func meta(at offset: Int) -> (mapSize: UInt64, pageSize: UInt32, transaction: UInt64) {
            var buffer = [UInt8](repeating: 0, count: 16 + 136)
            let count = buffer.withUnsafeMutableBytes { pread(fd, $0.baseAddress, $0.count, off_t(offset)) }
            guard count == buffer.count else { return (0, 0, 0) }
            return buffer.withUnsafeBytes { raw in
                (
                    raw.loadUnaligned(fromByteOffset: 32, as: UInt64.self),
                    raw.loadUnaligned(fromByteOffset: 40, as: UInt32.self),
                    raw.loadUnaligned(fromByteOffset: 144, as: UInt64.self)
                )
            }
        }
        let first = meta(at: 0)
        let second = meta(at: Int(first.pageSize))
        return Int(second.transaction > first.transaction ? second.mapSize : first.mapSize)
    }

    /// Checks that the log holds each save once, with its one change, and that the items are
    /// those the acknowledged saves leave.
    static func checkLog(store path: String, lines: [Substring], saves: Int, into report: inout TortureReport) throws {
        var expected: Set<String> = []
        for line in lines {
            let fields = line.split(separator: " ")
            guard fields.count == 4, fields[0] == "ack" else { continue }
            if fields[2] == "delete" { expected.remove(String(fields[3])) } else { expected.insert(String(fields[3])) }
        }
        let store = try Store(directory: path, options: StoreOptions(initialMapSize: 1 << 20), create: false)
        var commits = 0
        try store.read { snapshot in
            try store.log.forEachEntry(after: 0, in: snapshot) { entry in
                commits += 1
                if entry.changes.count != 1 {
                    report.problems.append("commit \(entry.sequence) holds \(entry.changes.count) changes, not 1")
                }
                return true
            }
        }
        if commits != saves { report.problems.append("the log holds \(commits) commits for \(saves) saves") }
        let container = try ModelContainer(
            for: TortureItem.self,
            configurations: ModelConfiguration(url: URL(fileURLWithPath: path), allowsSave: false))
        let held = Set(try ModelContext(container).fetchIdentifiers(FetchDescriptor<TortureItem>()))
        if held != expected {
            report.problems.append(
                "the store holds \(held.count) items, the acknowledged saves leave \(expected.count) "
                    + "(\(held.symmetricDifference(expected).sorted().prefix(5).joined(separator: ", ")) differ)")
        }
    }

    /// Checks the reader's report: no error, the last commit seen, the grown map adopted, both
    /// live queries equal to a fresh fetch.
    static func checkReader(_ read: WorkerRun, last: UInt64, mapSize: Int, into report: inout TortureReport) {
        if read.status != 0 {
            report.problems.append("the reader exited with status \(read.status): \(read.standardError)")
        }
        for line in read.lines where line.hasPrefix("error ") { report.problems.append("reader: \(line.dropFirst(6))") }
        guard let done = read.lines.last(where: { $0.hasPrefix("done ") }) else {
            report.problems.append("the reader did not finish")
            return
        }
        let fields = done.split(separator: " ")
        func value(_ name: String) -> Int? {
            fields.firstIndex(of: Substring(name)).flatMap { $0 + 1 < fields.count ? Int(fields[$0 + 1]) : nil }
        }
        if value("head") != Int(last) {
            report.problems.append("the reader saw commit \(value("head") ?? 0), not \(last)")
        }
        if (value("map") ?? 0) < mapSize {
            report.problems.append("the reader's map is \(value("map") ?? 0) bytes, the file's \(mapSize)")
        }
        if value("live") != 2 {
            report.problems.append("the reader compared \(value("live") ?? 0) live queries, not 2")
        }
        if (value("reads") ?? 0) == 0 { report.problems.append("the reader read nothing") }
    }
}
