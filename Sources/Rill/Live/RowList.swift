import Synchronization

/// The ordered rows of a live query, in chunks: inserting or removing a row moves at most one
/// chunk's slots, and a copy for a snapshot costs the writer, on its next change, the chunk it
/// changes and the table of chunks — plain bytes, with no reference count to touch.
///
/// A slot is the first eight bytes of a row's order key and the row itself, unretained: most
/// comparisons of a binary search read only the slot. The rows are kept alive by their owner
/// (the query's table of held rows and, for rows it let go of, the `LiveVersion` of every
/// snapshot that may still show them).
///
/// Chunks are memory the list manages itself, so that copying the table of chunks copies
/// addresses rather than retaining a buffer per chunk (a cache miss each, for a long list).
/// The rules that make this safe:
/// - A copy is taken only through ``share()``, which seals every chunk: a sealed chunk is never
///   written again; the list copies it before changing it.
/// - A chunk the list stops using is freed at once when it was made since the last seal (no
///   copy can show it), and otherwise retired into the `LiveVersion` given, which frees it when
///   no snapshot can show it any more.
/// - The owner retires every chunk (``retireAll(into:)``) before dropping the list.
struct RowList: @unchecked Sendable {
    // Sendable: a shared copy's chunks are sealed, never written again, and freed only once no
    // snapshot holds a version that may show them.
    struct Slot: Sendable {
        /// The first eight bytes of the order key, big-endian, zero-padded (0 without one).
        var prefix: UInt64
        var row: Unmanaged<LiveEntry>
    }

    /// Chunks hold at most this many slots; a full chunk splits in two.
    static let chunkCapacity = 512

    /// Non-empty chunks, in order, each with room for `chunkCapacity` slots.
    private var chunks: [UnsafeMutablePointer<Slot>] = []
    /// `starts[i]` is the position of chunk `i`'s first slot; one more entry holds the count.
    private var starts: [Int] = [0]
    /// The last slot of each chunk, side by side: a search finds the chunk without touching
    /// the chunks it passes over.
    private var lasts: [Slot] = []
    /// The seal each chunk was made under; chunks of an earlier seal may be shared.
    private var made: [UInt64] = []
    private var seal: UInt64 = 0

    init() {}

    /// How many slots a chunk of a list made at once fills: room is left for the inserts of
    /// later commits (a full chunk splits in two), but little, since most of a long list's
    /// chunks never change again and the room would be memory held for nothing.
    static let loadedChunkCount = chunkCapacity * 7 / 8

    /// The rows, in order, in chunks filled to `loadedChunkCount`.
    init(_ rows: [LiveEntry]) {
        var position = 0
        while position < rows.count {
            let count = min(Self.loadedChunkCount, rows.count - position)
            let chunk = ChunkPool.take()
            for index in 0..<count {
                let row = rows[position + index]
                (chunk + index).initialize(to: Slot(prefix: Self.prefix(of: row), row: .passUnretained(row)))
            }
            chunks.append(chunk)
            lasts.append(chunk[count - 1])
            made.append(seal)
            position += count
            starts.append(position)
        }
    }

    var count: Int { starts[starts.count - 1] }

    subscript(position: Int) -> LiveEntry {
        precondition(position >= 0 && position < count, "RowList index out of range")
        let chunk = chunkIndex(containing: position)
        return chunks[chunk][position - starts[chunk]].row.takeUnretainedValue()
    }

    var last: LiveEntry? { lasts.last?.row.takeUnretainedValue() }

    private func chunkCount(_ chunk: Int) -> Int { starts[chunk + 1] - starts[chunk] }

    /// The chunk holding `position` (0 ≤ position < count).
    private func chunkIndex(containing position: Int) -> Int {
        var low = 0
        var high = chunks.count - 1
        while low < high {
            let middle = (low + high + 1) / 2
            if starts[middle] <= position { low = middle } else { high = middle - 1 }
        }
        return low
    }

    /// The position of the first row not ordered before `probe` by `precedes`.
    func partitionPoint(before probe: LiveEntry, _ precedes: (LiveEntry, LiveEntry) -> Bool) -> Int {
        partitionPoint(before: probe, isBefore: { precedes($0, probe) })
    }

    /// The position of the first row for which `isBefore` (`precedes(row, probe)`) is false.
    func partitionPoint(before probe: LiveEntry, isBefore rowIsBefore: (LiveEntry) -> Bool) -> Int {
        let prefix = Self.prefix(of: probe)
        func isBefore(_ slot: Slot) -> Bool {
            if slot.prefix != prefix { return slot.prefix < prefix }
            return rowIsBefore(slot.row.takeUnretainedValue())
        }
        // The first chunk whose last row is not before the probe.
        var low = 0
        var high = lasts.count
        while low < high {
            let middle = (low + high) / 2
            if isBefore(lasts[middle]) { low = middle + 1 } else { high = middle }
        }
        guard low < chunks.count else { return count }
        let chunk = chunks[low]
        var first = 0
        var last = chunkCount(low)
        while first < last {
            let middle = (first + last) / 2
            if isBefore(chunk[middle]) { first = middle + 1 } else { last = middle }
        }
        return starts[low] + first
    }

    /// The position of the first row that passes `test`, by a walk of every row.
    func position(where test: (LiveEntry) -> Bool) -> Int? {
        for (index, chunk) in chunks.enumerated() {
            for offset in 0..<chunkCount(index) where test(chunk[offset].row.takeUnretainedValue()) {
                return starts[index] + offset
            }
        }
        return nil
    }

    // MARK: - Copies and chunk memory

    /// A copy that stays as it is while this list changes (its chunks are sealed).
    mutating func share() -> RowList {
        seal += 1
        return self
    }

    /// Chunk `chunk`, made writable: a sealed chunk is replaced by a copy, and retired.
    private mutating func writableChunk(_ chunk: Int, retiring version: LiveVersion) -> UnsafeMutablePointer<Slot> {
        if made[chunk] == seal { return chunks[chunk] }
        let copy = ChunkPool.take()
        copy.initialize(from: chunks[chunk], count: chunkCount(chunk))
        version.retire(chunks[chunk])
        chunks[chunk] = copy
        made[chunk] = seal
        return copy
    }

    /// Lets go of a chunk the list no longer uses.
    private func release(_ chunk: UnsafeMutablePointer<Slot>, madeUnder seal: UInt64, retiring version: LiveVersion) {
        if seal == self.seal { ChunkPool.give([chunk]) } else { version.retire(chunk) }
    }

    /// Gives up every chunk: the list is empty afterwards.
    mutating func retireAll(into version: LiveVersion) {
        for index in chunks.indices { release(chunks[index], madeUnder: made[index], retiring: version) }
        chunks = []
        starts = [0]
        lasts = []
        made = []
    }

    // MARK: - Changes

    mutating func insert(_ row: LiveEntry, at position: Int, retiring version: LiveVersion) {
        precondition(position >= 0 && position <= count, "RowList insertion index out of range")
        let slot = Slot(prefix: Self.prefix(of: row), row: .passUnretained(row))
        if chunks.isEmpty {
            let chunk = ChunkPool.take()
            chunk.initialize(to: slot)
            chunks = [chunk]
            starts = [0, 1]
            lasts = [slot]
            made = [seal]
            return
        }
        // At a chunk boundary, prefer the end of the previous chunk.
        var index = position == count ? chunks.count - 1 : chunkIndex(containing: position)
        if chunkCount(index) == Self.chunkCapacity {
            split(index, retiring: version)
            // At the boundary, the end of the lower half (it has room now).
            if position > starts[index + 1] { index += 1 }
        }
        let chunk = writableChunk(index, retiring: version)
        let offset = position - starts[index]
        let moving = chunkCount(index) - offset
        (chunk + offset + 1).moveInitialize(from: chunk + offset, count: moving)
        (chunk + offset).initialize(to: slot)
        for later in (index + 1)..<starts.count { starts[later] += 1 }
        lasts[index] = chunk[chunkCount(index) - 1]
    }

    /// Splits a full chunk into two halves.
    private mutating func split(_ index: Int, retiring version: LiveVersion) {
        let total = chunkCount(index)
        let half = total / 2
        let upper = ChunkPool.take()
        upper.initialize(from: chunks[index] + half, count: total - half)
        // The lower half stays where it is unless the chunk is sealed.
        let lower = writableChunk(index, retiring: version)
        chunks.insert(upper, at: index + 1)
        made.insert(seal, at: index + 1)
        starts.insert(starts[index] + half, at: index + 1)
        lasts[index] = lower[half - 1]
        lasts.insert(upper[total - half - 1], at: index + 1)
    }

    @discardableResult
    mutating func remove(at position: Int, retiring version: LiveVersion) -> LiveEntry {
        precondition(position >= 0 && position < count, "RowList index out of range")
        let index = chunkIndex(containing: position)
        let offset = position - starts[index]
        let total = chunkCount(index)
        let removed = chunks[index][offset].row.takeUnretainedValue()
        if total == 1 {
            release(chunks[index], madeUnder: made[index], retiring: version)
            chunks.remove(at: index)
            made.remove(at: index)
            lasts.remove(at: index)
            starts.remove(at: index)
            for later in index..<starts.count { starts[later] -= 1 }
            return removed
        }
        let chunk = writableChunk(index, retiring: version)
        (chunk + offset).moveInitialize(from: chunk + offset + 1, count: total - offset - 1)
        for later in (index + 1)..<starts.count { starts[later] -= 1 }
        lasts[index] = chunk[total - 2]
        return removed
    }

    /// Keeps the first `count` rows.
    mutating func truncate(to newCount: Int, retiring version: LiveVersion) {
        guard newCount < count else { return }
        if newCount <= 0 {
            retireAll(into: version)
            return
        }
        let keep = chunkIndex(containing: newCount - 1)
        for index in (keep + 1)..<chunks.count { release(chunks[index], madeUnder: made[index], retiring: version) }
        chunks.removeSubrange((keep + 1)...)
        made.removeSubrange((keep + 1)...)
        lasts.removeSubrange((keep + 1)...)
        starts.removeSubrange((keep + 1)...)
        starts.append(newCount)
        // The kept chunk's slots are not written: only its count and last slot change.
        lasts[keep] = chunks[keep][newCount - starts[keep] - 1]
    }

    /// The first eight bytes of `row`'s order key as a big-endian number: its order is the
    /// keys' order wherever the prefixes differ.
    static func prefix(of row: LiveEntry) -> UInt64 {
        row.orderPrefix.0
    }
}
