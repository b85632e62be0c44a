import Foundation
import RillTestSupport
import RillTorture
import RillWorkloads
import Testing

/// The fault shim's journal, through a process that writes a file under it: the synced image
/// holds what was flushed, the journal every write since, and the images built from them are
/// exactly those a brute-force model of the disk allows.
@Suite struct PowerCutJournalTests {
    /// Runs `rill-torture worker journal-probe` on `file` under the shim, journaling into `journal`.
    static func probe(_ file: String, journal: URL, _ steps: [String]) throws -> Process {
        let process = Process()
        process.executableURL = buildProductsDirectory.appendingPathComponent("rill-torture")
        process.arguments = ["worker", "journal-probe", file] + steps
        var environment = ProcessInfo.processInfo.environment
        environment["LD_PRELOAD"] = buildProductsDirectory.appendingPathComponent("libRillFaultShim.so").path
        environment["RILL_FAULT_FILES"] = file
        environment["RILL_FAULT_JOURNAL"] = journal.path
        process.environment = environment
        try process.run()
        return process
    }

    static func bytes(_ count: Int, _ byte: UInt8) -> [UInt8] { [UInt8](repeating: byte, count: count) }

    /// `value` as `size` little-endian bytes, as the journal's header and records hold numbers.
    static func little(_ value: Int, _ size: Int) -> [UInt8] {
        (0..<size).map { UInt8(truncatingIfNeeded: value >> (8 * $0)) }
    }

    /// The journal's records as the shim writes them (offset, length, flags, then the bytes),
    /// and where each starts in the journal, after its 64-byte header.
    static func journalRecords(
        _ records: [(offset: Int, bytes: [UInt8], flags: Int)]
    ) -> (
        body: [UInt8], positions: [Int]
    ) {
        var body: [UInt8] = []
        var positions: [Int] = []
        for (offset, bytes, flags) in records {
            positions.append(64 + body.count)
            body += little(offset, 8) + little(bytes.count, 4) + little(flags, 4) + bytes
        }
        return (body, positions)
    }

    /// The disk as a model: the writes of the script, in order, each cut into its 4 KiB pages.
    struct Model {
        var pieces: [(offset: Int, bytes: [UInt8], durable: Bool)] = []

        mutating func write(_ offset: Int, _ bytes: [UInt8], durable: Bool = false) {
            var start = 0
            while start < bytes.count {
                let end = min(bytes.count, ((offset + start) / 4096 + 1) * 4096 - offset)
                pieces.append((offset + start, Array(bytes[start..<end]), durable))
                start = end
            }
        }

        func image(from synced: [UInt8], keeping keep: (Int) -> Bool) -> [UInt8] {
            var image = synced
            var index = 0
            for piece in pieces {
                defer { if !piece.durable { index += 1 } }
                guard piece.durable || keep(index) else { continue }
                if image.count < piece.offset + piece.bytes.count {
                    image += Array(repeating: 0, count: piece.offset + piece.bytes.count - image.count)
                }
                image.replaceSubrange(piece.offset..<(piece.offset + piece.bytes.count), with: piece.bytes)
            }
            return image
        }
    }

    @Test func imagesAreTheSyncedFilePlusAnySubsetOfTheLaterWrites() throws {
        let directory = TemporaryDirectory()
        let file = directory.path("data.bin")
        let journal = directory.url.appendingPathComponent("journal")
        try FileManager.default.createDirectory(at: journal, withIntermediateDirectories: true)
        let process = try Self.probe(
            file, journal: journal,
            [
                "w0+4096=97", "w4096+4096=98", "s", "w0+4096=99", "v6000+3000=100,1000=101", "d100+10=102",
                "w4096+10=103",
            ]
        )
        process.waitUntilExit()
        #expect(process.terminationStatus == 0)

        let journaled = try PowerCutJournal(directory: journal, name: "data.bin")
        let synced = Self.bytes(4096, 97) + Self.bytes(4096, 98)
        #expect(journaled.synced == synced)
        var model = Model()
        model.write(0, Self.bytes(4096, 99))
        model.write(6000, Self.bytes(3000, 100) + Self.bytes(1000, 101))
        model.write(100, Self.bytes(10, 102), durable: true)
        model.write(4096, Self.bytes(10, 103))
        let optional = model.pieces.filter { !$0.durable }.count
        #expect(journaled.pieces.count == model.pieces.count)
        #expect(journaled.pieces.filter(\.isDurable).count == 1)
        // Every subset of the unsynced pieces, against the model (`keep` is asked of those only).
        for mask in 0..<(1 << optional) {
            var asked = 0
            let image = journaled.image { _, _ in
                defer { asked += 1 }
                return mask & (1 << asked) != 0
            }
            #expect(asked == optional)
            #expect(image == model.image(from: synced) { mask & (1 << $0) != 0 }, "subset \(mask)")
        }
        #expect(journaled.everything == (try [UInt8](Data(contentsOf: URL(fileURLWithPath: file)))))
        #expect(journaled.everything == model.image(from: synced) { _ in true })
    }

    /// Two processes write the same file at once, each flushing now and then: every append and
    /// fold stays whole, so the synced image plus every journaled write is the file.
    @Test func processesWritingAtOnceKeepTheJournalWhole() throws {
        let directory = TemporaryDirectory()
        let file = directory.path("data.bin")
        let journal = directory.url.appendingPathComponent("journal")
        try FileManager.default.createDirectory(at: journal, withIntermediateDirectories: true)
        var random = SeededGenerator(seed: UInt64.random(in: 1...UInt64(UInt32.max)))
        print("PowerCutJournalTests seed \(random.seed)")
        let processes = try (0..<2).map { writer in
            let steps = (0..<150).map { step -> String in
                if Int.random(in: 0..<12, using: &random) == 0 { return "s" }
                let offset = writer << 20 + Int.random(in: 0..<200, using: &random) * 512
                return
                    "w\(offset)+\(Int.random(in: 1...9000, using: &random))=\(Int.random(in: 0...255, using: &random))"
            }
            return try Self.probe(file, journal: journal, steps)
        }
        for process in processes {
            process.waitUntilExit()
            #expect(process.terminationStatus == 0)
        }
        let journaled = try PowerCutJournal(directory: journal, name: "data.bin")
        #expect(journaled.everything == (try [UInt8](Data(contentsOf: URL(fileURLWithPath: file)))))
    }

    /// A fold cut short by a kill (its mark still set) is finished by whoever comes next: the
    /// harness reading the journal, or a process taking its lock to write.
    @Test func aFoldLeftUnfinishedIsFinishedFirst() throws {
        let directory = TemporaryDirectory()
        let file = directory.path("data.bin")
        let journal = directory.url.appendingPathComponent("journal")
        try FileManager.default.createDirectory(at: journal, withIntermediateDirectories: true)
        let records = [(0, Self.bytes(100, 2)), (50, Self.bytes(100, 3))]
        let body = Self.journalRecords(records.map { ($0.0, $0.1, 0) }).body
        let end = 64 + body.count
        let header = Array("RILLJNL1".utf8) + Self.little(end, 8) + Self.little(end, 8) + Self.bytes(40, 0)
        let synced = Self.bytes(8192, 1)
        var folded = synced
        folded.replaceSubrange(0..<100, with: Self.bytes(100, 2))
        folded.replaceSubrange(50..<150, with: Self.bytes(100, 3))
        // What the killed fold had done already: the first record, half of the second.
        var half = folded
        half.replaceSubrange(100..<150, with: Self.bytes(50, 1))
        try Data(half).write(to: journal.appendingPathComponent("data.bin.synced"))
        try Data(header + body).write(to: journal.appendingPathComponent("data.bin.journal"))

        let read = try PowerCutJournal(directory: journal, name: "data.bin")
        #expect(read.synced == folded)
        #expect(read.writes.isEmpty)

        let process = try Self.probe(file, journal: journal, ["w9000+10=4"])
        process.waitUntilExit()
        #expect(process.terminationStatus == 0)
        #expect((try [UInt8](Data(contentsOf: journal.appendingPathComponent("data.bin.synced")))) == folded)
        let after = try PowerCutJournal(directory: journal, name: "data.bin")
        #expect(after.synced == folded)
        #expect(after.writes == [PowerCutJournal.Write(offset: 9000, bytes: Self.bytes(10, 4), isDurable: false)])
    }

    /// A write its process was killed in the middle of may or may not be on disk; a write that
    /// failed wrote nothing.
    @Test func writesInFlightAreOptionalAndFailedOnesAbsent() throws {
        let directory = TemporaryDirectory()
        let records = [(0, Self.bytes(10, 5), 4), (0, Self.bytes(10, 6), 0), (20, Self.bytes(10, 7), 2 | 1)]
        let body = Self.journalRecords(records).body
        let header = Array("RILLJNL1".utf8) + Self.little(64 + body.count, 8) + Self.bytes(48, 0)
        try Data(header + body).write(to: directory.url.appendingPathComponent("f.journal"))
        let journaled = try PowerCutJournal(directory: directory.url, name: "f")
        #expect(journaled.synced.isEmpty)
        #expect(
            journaled.writes == [
                .init(offset: 0, bytes: Self.bytes(10, 6), isDurable: false),
                .init(offset: 20, bytes: Self.bytes(10, 7), isDurable: true, isInFlight: true),
            ])
        #expect(journaled.writes[1].isDurable == false)
        #expect(journaled.image { _, _ in false }.isEmpty)
        let written = Self.bytes(10, 6) + Self.bytes(10, 0) + Self.bytes(10, 7)
        #expect(journaled.accounts(for: written))
        #expect(journaled.accounts(for: Self.bytes(10, 6)))
        #expect(!journaled.accounts(for: Self.bytes(10, 5)))
    }

    /// A flush while a write is in flight (another process's, which may be killed before it is
    /// made) folds the records before it only: that write and those after it stay in the journal,
    /// in their places, so that synced + journal is still the file whether or not the write is
    /// made. A fold cut short there is finished the same way.
    @Test func aFlushStopsAtAWriteInFlight() throws {
        let directory = TemporaryDirectory()
        let file = directory.path("data.bin")
        let journal = directory.url.appendingPathComponent("journal")
        try FileManager.default.createDirectory(at: journal, withIntermediateDirectories: true)
        // Written, then in flight (its process killed before it wrote), then written.
        let records = [(0, Self.bytes(100, 2), 0), (50, Self.bytes(100, 3), 2), (200, Self.bytes(10, 4), 0)]
        let (body, positions) = Self.journalRecords(records)
        let end = 64 + body.count
        let synced = Self.bytes(8192, 1)
        var first = synced
        first.replaceSubrange(0..<100, with: Self.bytes(100, 2))
        let inFlight = PowerCutJournal.Write(offset: 50, bytes: Self.bytes(100, 3), isDurable: false, isInFlight: true)
        let written = PowerCutJournal.Write(offset: 200, bytes: Self.bytes(10, 4), isDurable: false)
        let header = Array("RILLJNL1".utf8) + Self.little(end, 8) + Self.bytes(48, 0)
        try Data(synced).write(to: journal.appendingPathComponent("data.bin.synced"))
        try Data(header + body).write(to: journal.appendingPathComponent("data.bin.journal"))
        try Data(first).write(to: URL(fileURLWithPath: file))

        let flush = try Self.probe(file, journal: journal, ["s"])
        flush.waitUntilExit()
        #expect(flush.terminationStatus == 0)
        let after = try PowerCutJournal(directory: journal, name: "data.bin")
        #expect(after.synced == first)
        #expect(after.writes == [inFlight, written])
        // The file without the write in flight, and with it (wholly or its first page).
        var made = first
        made.replaceSubrange(50..<150, with: Self.bytes(100, 3))
        made.replaceSubrange(200..<210, with: Self.bytes(10, 4))
        var notMade = first
        notMade.replaceSubrange(200..<210, with: Self.bytes(10, 4))
        #expect(after.accounts(for: made))
        #expect(after.accounts(for: notMade))
        let raw = [UInt8](try Data(contentsOf: journal.appendingPathComponent("data.bin.journal")))
        #expect(
            Array(raw[8..<40]) == Self.little(end, 8) + Self.little(0, 8) + Self.little(0, 8)
                + Self.little(positions[1], 8))

        // The next write goes after them; the next flush stops at the same place.
        let more = try Self.probe(file, journal: journal, ["w9000+10=5", "s"])
        more.waitUntilExit()
        #expect(more.terminationStatus == 0)
        let later = try PowerCutJournal(directory: journal, name: "data.bin")
        #expect(later.synced == first)
        #expect(
            later.writes == [
                inFlight, written, PowerCutJournal.Write(offset: 9000, bytes: Self.bytes(10, 5), isDurable: false),
            ])

        // A fold killed while it folded the first record only: the harness, and the next
        // process, finish it up to the write in flight.
        let unfinished = Array("RILLJNL1".utf8) + Self.little(end, 8) + Self.little(positions[1], 8) + Self.bytes(40, 0)
        try Data(synced).write(to: journal.appendingPathComponent("data.bin.synced"))
        try Data(unfinished + body).write(to: journal.appendingPathComponent("data.bin.journal"))
        let read = try PowerCutJournal(directory: journal, name: "data.bin")
        #expect(read.synced == first)
        #expect(read.writes == [inFlight, written])
        let finish = try Self.probe(file, journal: journal, ["w9000+10=5"])
        finish.waitUntilExit()
        #expect(finish.terminationStatus == 0)
        let finished = try PowerCutJournal(directory: journal, name: "data.bin")
        #expect((try [UInt8](Data(contentsOf: journal.appendingPathComponent("data.bin.synced")))) == first)
        #expect(
            finished.writes == [
                inFlight, written, PowerCutJournal.Write(offset: 9000, bytes: Self.bytes(10, 5), isDurable: false),
            ])
    }
}
