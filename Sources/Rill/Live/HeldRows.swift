/// The rows a live query holds, by identifier key: their owner.
///
/// An open-addressing table of row references, 8 bytes a slot, searched by linear probing; the
/// key is read from the row itself, so the table stores nothing else. A `Dictionary` from key
/// to row takes 16 bytes a slot and a copy of every key's reference, for as many rows; a query
/// holding 50,000 rows pays the difference 50,000 times. Keys are hashed with `Hasher`, seeded
/// for each process, so records written to collide cannot make the table slow.
///
/// Owned by one query (on the follower's thread); not shared.
final class HeldRows {
    /// Addresses of retained rows; 0 for an empty slot.
    private var slots: UnsafeMutablePointer<UInt>
    /// A power of two (0 before the first row).
    private var capacity = 0
    private(set) var count = 0

    init() {
        slots = UnsafeMutablePointer(bitPattern: UInt(MemoryLayout<UInt>.alignment))!
    }

    deinit {
        for index in 0..<capacity where slots[index] != 0 { Self.release(slots[index]) }
        if capacity > 0 { slots.deallocate() }
    }

    var isEmpty: Bool { count == 0 }

    /// The held row with identifier key `key`.
    subscript(key: [UInt8]) -> LiveEntry? {
        guard count > 0 else { return nil }
        let slot = find(key)
        return slots[slot] == 0 ? nil : Self.row(slots[slot])
    }

    /// Holds `row` in place of the row with its key, which is returned.
    @discardableResult
    func insert(_ row: LiveEntry) -> LiveEntry? {
        if (count + 1) * 4 > capacity * 3 { resize(to: max(16, capacity * 2)) }
        let slot = find(row.key)
        let address = UInt(bitPattern: Unmanaged.passRetained(row).toOpaque())
        if slots[slot] == 0 {
            slots[slot] = address
            count += 1
            return nil
        }
        let old = Self.take(slots[slot])
        slots[slot] = address
        return old
    }

    /// Stops holding the row with identifier key `key`, and returns it.
    @discardableResult
    func remove(_ key: [UInt8]) -> LiveEntry? {
        guard count > 0 else { return nil }
        var hole = find(key)
        guard slots[hole] != 0 else { return nil }
        let row = Self.take(slots[hole])
        slots[hole] = 0
        count -= 1
        // Moves back the rows after the hole whose search would pass over it, so that no
        // search stops early at an empty slot (no tombstones).
        let mask = capacity - 1
        var next = (hole + 1) & mask
        while slots[next] != 0 {
            let home = Self.home(Self.row(slots[next]).key, mask: mask)
            // The row may move to the hole when the hole lies between its home and its slot.
            if (next - home) & mask >= (next - hole) & mask {
                slots[hole] = slots[next]
                slots[next] = 0
                hole = next
            }
            next = (next + 1) & mask
        }
        if capacity > 64, count * 8 < capacity { resize(to: capacity / 2) }
        return row
    }

    /// Makes room for `count` rows in all without growing again.
    func reserveCapacity(_ count: Int) {
        var wanted = max(16, capacity)
        while count * 4 > wanted * 3 { wanted *= 2 }
        if wanted > capacity { resize(to: wanted) }
    }

    /// Every held row, in no order.
    var rows: [LiveEntry] {
        var rows: [LiveEntry] = []
        rows.reserveCapacity(count)
        forEach { rows.append($0) }
        return rows
    }

    /// Every held row's key, in no order.
    var keys: [[UInt8]] {
        var keys: [[UInt8]] = []
        keys.reserveCapacity(count)
        forEach { keys.append($0.key) }
        return keys
    }

    func forEach(_ body: (LiveEntry) throws -> Void) rethrows {
        for index in 0..<capacity where slots[index] != 0 { try body(Self.row(slots[index])) }
    }

    /// Lets go of every row; returns them.
    func removeAll() -> [LiveEntry] {
        var rows: [LiveEntry] = []
        rows.reserveCapacity(count)
        for index in 0..<capacity where slots[index] != 0 {
            rows.append(Self.take(slots[index]))
            slots[index] = 0
        }
        count = 0
        if capacity > 64 {
            slots.deallocate()
            capacity = 0
            slots = UnsafeMutablePointer(bitPattern: UInt(MemoryLayout<UInt>.alignment))!
        }
        return rows
    }

    // MARK: - Slots

    /// The slot holding the row with `key`, or the empty slot where it would go.
    private func find(_ key: [UInt8]) -> Int {
        let mask = capacity - 1
        var slot = Self.home(key, mask: mask)
        while slots[slot] != 0 {
            if Self.row(slots[slot]).key == key { return slot }
            slot = (slot + 1) & mask
        }
        return slot
    }

    private func resize(to newCapacity: Int) {
        let old = (slots, capacity)
        slots = .allocate(capacity: newCapacity)
        slots.initialize(repeating: 0, count: newCapacity)
        capacity = newCapacity
        let mask = newCapacity - 1
        for index in 0..<old.1 where old.0[index] != 0 {
            var slot = Self.home(Self.row(old.0[index]).key, mask: mask)
            while slots[slot] != 0 { slot = (slot + 1) & mask }
            slots[slot] = old.0[index]
        }
        if old.1 > 0 { old.0.deallocate() }
    }

    private static func home(_ key: [UInt8], mask: Int) -> Int {
        var hasher = Hasher()
        key.withUnsafeBytes { hasher.combine(bytes: $0) }
        return hasher.finalize() & mask
    }

    private static func row(_ address: UInt) -> LiveEntry {
        Unmanaged<LiveEntry>.fromOpaque(UnsafeRawPointer(bitPattern: address)!).takeUnretainedValue()
    }

    /// The row at `address`, with the table's reference handed to the caller.
    private static func take(_ address: UInt) -> LiveEntry {
        Unmanaged<LiveEntry>.fromOpaque(UnsafeRawPointer(bitPattern: address)!).takeRetainedValue()
    }

    private static func release(_ address: UInt) {
        Unmanaged<LiveEntry>.fromOpaque(UnsafeRawPointer(bitPattern: address)!).release()
    }
}
