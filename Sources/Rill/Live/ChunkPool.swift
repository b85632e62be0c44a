import RillLocks

/// Chunk memory kept for reuse: a commit copies the chunks it changes and lets go of the copies
/// an earlier commit made, so the same few hundred chunks go round. Taking them from here
/// rather than from the allocator spares its locks and the page faults of memory it handed
/// back to the system meanwhile.
enum ChunkPool {
    /// The most chunks kept (8 MiB); past it, chunks are freed.
    static let capacity = 1_024

    /// Free chunks, by address (an address is Sendable, a pointer is not).
    private static let free = Lock<[UInt]>([])

    /// A chunk with room for `RowList.chunkCapacity` slots, none initialized.
    static func take() -> UnsafeMutablePointer<RowList.Slot> {
        if let address = free.withLock({ $0.popLast() }),
            let chunk = UnsafeMutablePointer<RowList.Slot>(bitPattern: address)
        {
            return chunk
        }
        return .allocate(capacity: RowList.chunkCapacity)
    }

    /// Takes back chunks no longer used (their slots need no deinitialization).
    static func give(_ chunks: [UnsafeMutablePointer<RowList.Slot>]) {
        guard !chunks.isEmpty else { return }
        let kept = free.withLock { free -> Int in
            let room = min(max(capacity - free.count, 0), chunks.count)
            for chunk in chunks.prefix(room) { free.append(UInt(bitPattern: chunk)) }
            return room
        }
        for chunk in chunks.dropFirst(kept) { chunk.deallocate() }
    }
}
