import Foundation
import RillWorkloads

/// What the fault shim's journal (`Sources/RillFaultShim/journal.c`) knows of one watched file
/// once every process writing it is dead: what its disk holds for sure (the synced image), and
/// the writes made since, in order, any subset of which a power cut may have let reach the disk.
///
/// A write is torn at 4 KiB boundaries of the file: a disk and the page cache write back page by
/// page, in no order they promise, so each page of a write is a piece on its own. A write that was
/// durable when it returned (through an O_DSYNC descriptor) is always applied; one its process
/// was killed in the middle of is a piece like any unsynced one.
package struct PowerCutJournal: Sendable {
    /// One unsynced write: the bytes it put at `offset`.
    package struct Write: Sendable, Equatable {
        package var offset: Int
        package var bytes: [UInt8]
        /// Whether it was on disk when it returned (an O_DSYNC write): every image holds it.
        package var isDurable: Bool
        /// Whether its process was killed during the call: it may or may not have been written.
        package var isInFlight: Bool

        package init(offset: Int, bytes: [UInt8], isDurable: Bool, isInFlight: Bool = false) {
            self.offset = offset
            self.bytes = bytes
            self.isDurable = isDurable && !isInFlight
            self.isInFlight = isInFlight
        }
    }

    /// A piece of a write that a power cut keeps or loses as a whole: a write's bytes within one
    /// 4 KiB page of the file.
    package struct Piece: Sendable, Equatable {
        /// The write it belongs to, as an index of ``writes``.
        package var write: Int
        package var offset: Int
        package var range: Range<Int>
        package var isDurable: Bool
    }

    /// The size of the pieces a write tears into.
    package static let pageSize = 4096

    /// What the disk held at the last flush.
    package var synced: [UInt8]
    /// The writes since, in the order they were made.
    package var writes: [Write]

    package init(synced: [UInt8], writes: [Write]) {
        self.synced = synced
        self.writes = writes
    }

    /// Reads the synced image and the journal of the file named `name` in the shim's journal
    /// directory: the records from `start` (those before it are folded) to `end`. A fold a killed
    /// process left unfinished is finished here: the records it was folding, up to `folding`, go
    /// into the synced image (its flush had returned: the disk holds those writes); those after
    /// it, from the first write that was in flight, stay writes.
    package init(directory: URL, name: String) throws {
        let syncedURL = directory.appendingPathComponent("\(name).synced")
        var synced = (try? Data(contentsOf: syncedURL)).map { [UInt8]($0) } ?? []
        let journal = (try? Data(contentsOf: directory.appendingPathComponent("\(name).journal"))).map { [UInt8]($0) }
        var writes: [Write] = []
        if let journal, journal.count >= 64 {
            guard journal[0..<8].elementsEqual(Array("RILLJNL1".utf8)) else {
                throw TortureUsage("\(name).journal is not a journal")
            }
            let end = Int(Self.integer(journal, at: 8, size: 8))
            let folding = Int(Self.integer(journal, at: 16, size: 8))
            let start = max(64, Int(Self.integer(journal, at: 32, size: 8)))
            var folded: [Write] = []
            var position = start
            let limit = min(end, journal.count)
            while position + 16 <= limit {
                let offset = Int(Self.integer(journal, at: position, size: 8))
                let length = Int(Self.integer(journal, at: position + 8, size: 4))
                let flags = Self.integer(journal, at: position + 12, size: 4)
                guard position + 16 + length <= limit else { break }
                // A failed call's record (flag 4) wrote nothing; what it wrote follows it.
                if flags & 4 == 0 {
                    let write = Write(
                        offset: offset, bytes: Array(journal[(position + 16)..<(position + 16 + length)]),
                        isDurable: flags & 1 != 0, isInFlight: flags & 2 != 0)
                    if position < folding { folded.append(write) } else { writes.append(write) }
                }
                position += 16 + length
            }
            Self.apply(folded, to: &synced)
        }
        self.init(synced: synced, writes: writes)
    }

    /// The pieces of the unsynced writes, in order.
    package var pieces: [Piece] {
        var pieces: [Piece] = []
        for (index, write) in writes.enumerated() {
            var start = 0
            while start < write.bytes.count {
                let page = (write.offset + start) / Self.pageSize
                let end = min(write.bytes.count, (page + 1) * Self.pageSize - write.offset)
                pieces.append(
                    Piece(write: index, offset: write.offset + start, range: start..<end, isDurable: write.isDurable))
                start = end
            }
        }
        return pieces
    }

    /// The file as a disk could hold it: the synced image, then the pieces `keep` chose (and the
    /// durable ones), applied in order.
    package func image(keeping keep: (Int, Piece) -> Bool) -> [UInt8] {
        var image = synced
        for (index, piece) in pieces.enumerated() where piece.isDurable || keep(index, piece) {
            Self.put(writes[piece.write].bytes[piece.range], at: piece.offset, in: &image)
        }
        return image
    }

    /// The file with every write applied: what the processes saw (the page cache).
    package var everything: [UInt8] {
        var image = synced
        Self.apply(writes, to: &image)
        return image
    }

    /// Whether `file` is what the processes wrote: the synced image with every write applied,
    /// and of each write in flight at the kill, the pages it made before the kill stopped it
    /// (none, some, all). When it is, the shim saw every write.
    package func accounts(for file: [UInt8]) -> Bool {
        let inFlight = writes.indices.filter { writes[$0].isInFlight }
        let pieces = self.pieces
        let choices = inFlight.map { write in pieces.count { $0.write == write } + 1 }
        guard choices.reduce(1, *) <= 10_000 else { return false }
        var made = [Int](repeating: 0, count: inFlight.count)
        while true {
            var image = synced
            var seen = [Int](repeating: 0, count: inFlight.count)
            for piece in pieces {
                if let slot = inFlight.firstIndex(of: piece.write) {
                    seen[slot] += 1
                    if seen[slot] > made[slot] { continue }
                }
                Self.put(writes[piece.write].bytes[piece.range], at: piece.offset, in: &image)
            }
            if image == file { return true }
            // The next combination of prefixes, as an odometer.
            var slot = 0
            while slot < made.count, made[slot] + 1 == choices[slot] {
                made[slot] = 0
                slot += 1
            }
            guard slot < made.count else { return false }
            made[slot] += 1
        }
    }

    /// A random image a power cut could leave, and how many of the pieces it kept. A quarter
    /// of the time the disk wrote back in order and stopped (a prefix of the pieces); otherwise
    /// each piece is kept with a probability drawn for this cut.
    package func randomImage(using random: inout SeededGenerator) -> (image: [UInt8], kept: Int, pieces: Int) {
        let count = pieces.count
        var kept = 0
        let image: [UInt8]
        if Int.random(in: 0..<4, using: &random) == 0 {
            let prefix = Int.random(in: 0...count, using: &random)
            image = self.image { index, piece in
                let keep = index < prefix
                if keep || piece.isDurable { kept += 1 }
                return keep
            }
        } else {
            let probability = Double.random(in: 0...1, using: &random)
            image = self.image { _, piece in
                let keep = Double.random(in: 0..<1, using: &random) < probability
                if keep || piece.isDurable { kept += 1 }
                return keep
            }
        }
        return (image, kept, count)
    }

    static func apply(_ writes: [Write], to image: inout [UInt8]) {
        for write in writes { put(write.bytes[...], at: write.offset, in: &image) }
    }

    static func put(_ bytes: ArraySlice<UInt8>, at offset: Int, in image: inout [UInt8]) {
        if image.count < offset + bytes.count {
            image += [UInt8](repeating: 0, count: offset + bytes.count - image.count)
        }
        image.replaceSubrange(offset..<(offset + bytes.count), with: bytes)
    }

    static func integer(_ bytes: [UInt8], at offset: Int, size: Int) -> UInt64 {
        var value: UInt64 = 0
        for index in (0..<size).reversed() { value = value << 8 | UInt64(bytes[offset + index]) }
        return value
    }
}
