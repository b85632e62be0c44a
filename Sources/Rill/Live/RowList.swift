/// The ordered rows of a live query: a chunked list of slots, each the first eight bytes of a
/// row's order key and the row itself, unretained.
///
/// Slots are plain values, so copying a chunk (when a snapshot shares it) copies bytes and
/// touches no reference count, and most comparisons of a binary search read only the slot. The
/// rows are kept alive by their owner: the query's table of held rows, and, for rows it let go,
/// the `LiveVersion` of every snapshot that may still show them.
struct RowList: Sendable {
    struct Slot: Sendable {
        /// The first eight bytes of the order key, big-endian, zero-padded (0 without one).
        var prefix: UInt64
        var row: Unmanaged<LiveEntry>
    }

    private var slots = ChunkedList<Slot>()

    init() {}

    init(_ rows: [LiveEntry]) {
        slots = ChunkedList(rows.map { Slot(prefix: Self.prefix(of: $0), row: .passUnretained($0)) })
    }

    var count: Int { slots.count }

    subscript(position: Int) -> LiveEntry { slots[position].row.takeUnretainedValue() }

    var last: LiveEntry? { slots.last?.row.takeUnretainedValue() }

    /// The position of the first row not ordered before `probe` by `precedes`.
    func partitionPoint(before probe: LiveEntry, _ precedes: (LiveEntry, LiveEntry) -> Bool) -> Int {
        let prefix = Self.prefix(of: probe)
        return slots.partitionPoint { slot in
            if slot.prefix != prefix { return slot.prefix < prefix }
            return precedes(slot.row.takeUnretainedValue(), probe)
        }
    }

    mutating func insert(_ row: LiveEntry, at position: Int) {
        slots.insert(Slot(prefix: Self.prefix(of: row), row: .passUnretained(row)), at: position)
    }

    @discardableResult
    mutating func remove(at position: Int) -> LiveEntry {
        slots.remove(at: position).row.takeUnretainedValue()
    }

    mutating func truncate(to count: Int) { slots.truncate(to: count) }

    /// The first eight bytes of `row`'s order key as a big-endian number: its order is the
    /// keys' order wherever the prefixes differ.
    static func prefix(of row: LiveEntry) -> UInt64 {
        guard let order = row.order else { return 0 }
        var value: UInt64 = 0
        for index in 0..<8 { value = value << 8 | UInt64(index < order.count ? order[index] : 0) }
        return value
    }
}

/// Keeps alive the rows a live query let go of while a snapshot that may show them lives.
///
/// A query has a current version; rows it stops holding go into the current version's list. A
/// snapshot holds the version that was current when it was taken, and each version holds the
/// next, so a snapshot keeps every row let go of since it was taken — exactly the rows it may
/// still show that the query no longer holds.
final class LiveVersion: @unchecked Sendable {
    // Sendable: written only by the follower thread while it is the current version; read by no
    // one else (released on any thread, once, by the last owner).
    var retired: [LiveEntry] = []
    var next: LiveVersion?

    init() {}

    deinit {
        // Release a long chain iteratively, not by recursion.
        var link = next
        next = nil
        while var node = link {
            link = nil
            guard isKnownUniquelyReferenced(&node) else { break }
            link = node.next
            node.next = nil
        }
    }
}
