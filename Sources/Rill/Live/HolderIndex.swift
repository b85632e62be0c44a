import CPrefetch
import Foundation

/// Which live queries of one entity hold which records: the follower asks it which queries a
/// change of a record may remove or move, instead of asking every query.
///
/// An open-addressing table searched by linear probing, whose slots hold each record's whole
/// entry: the key's hash and length in one word, the key itself when it has at most 16 bytes (an
/// integer's or a UUID's identifier key; a longer one in an array of its own), and the list of
/// holders. A search compares those words and reads no memory outside the slots, where a table
/// of objects would also read each object and its key found on the way (a cache miss each, in a
/// table of 100,000 records).
///
/// Keys are hashed with `KeyHash` under a seed of the table's own (see `KeyedObjects`). The table
/// has any number of slots: a hash picks its home slot by its high bits, scaled to the number of
/// slots. Removal shifts later entries back (no tombstones).
final class HolderIndex: @unchecked Sendable {
    // Sendable: the table is read and written under `lock` (the queries of a commit may apply
    // on two threads at once, each entering its own rows).
    private let lock = NSLock()

    /// One slot, 40 bytes: empty when `tag` is 0.
    private struct Slot {
        /// The key's hash but its lowest byte, and there its length plus one (0xFF for a key of
        /// more than 16 bytes): never 0 in a used slot.
        var tag: UInt64
        /// The key's first 8 bytes and next 8 when it has at most 16 (`InlineKey`).
        var low: UInt64
        var high: UInt64
        /// The key, when it has more than 16 bytes.
        var long: [UInt8]?
        var ids: [Int32]
    }

    /// Every slot holds a value: an empty one (no key, no list) where no record is.
    private var slots: UnsafeMutablePointer<Slot>?
    /// The slots' arithmetic, and their number.
    private var probing = LinearProbing()
    private var capacity: Int { probing.capacity }
    private var count = 0
    private let seed = KeyHash.seed()

    init() {}

    deinit {
        guard let slots else { return }
        slots.deinitialize(count: capacity)
        slots.deallocate()
    }

    func add(_ key: [UInt8], _ id: Int32) {
        lock.lock()
        defer { lock.unlock() }
        key.withUnsafeBytes { addHoldingLock($0, id) }
    }

    /// Enters `id` as a holder of the record of each of `rows`, under one lock, reading their
    /// keys in place.
    func add(_ rows: HeldRows, _ id: Int32) {
        lock.lock()
        defer { lock.unlock() }
        // Room for every key new, so that the table grows once at most.
        reserveCapacity(count + rows.count)
        let entries = rows.references()
        // Each row's entry is a slot of a large table and the list in it, and the row itself and
        // its key are in memory the rows' owner allocated long before: cache misses a row, each
        // waiting for the one before. So the rows are entered in a pipeline that asks for each
        // one's memory some rows ahead (`rill_prefetch`): the row, then (once it has come) its
        // key, its key's home slot, the slot's list of holders, and the list's end, where the
        // holder is appended. A key is hashed once, at its slot's step.
        let count = entries.count
        var hashes = [UInt64](repeating: 0, count: count)
        var lists = [UnsafeRawPointer?](repeating: nil, count: count)
        // From before the first row, so that every row passes every step.
        for index in -Self.rowLead..<count {
            let ahead = index + Self.rowLead
            if ahead < count { rill_prefetch(entries[ahead].toOpaque()) }
            let keyAhead = index + Self.keyLead
            if keyAhead >= 0, keyAhead < count {
                // The key's storage, read from the row's array without touching it: a hint.
                entries[keyAhead]._withUnsafeGuaranteedRef { row in
                    withUnsafeBytes(of: row.key) { Self.prefetchArray($0.load(as: UnsafeRawPointer.self)) }
                }
            }
            let keyed = index + Self.slotLead
            if keyed >= 0, keyed < count {
                let keyHash = entries[keyed]._withUnsafeGuaranteedRef { row in row.key.withUnsafeBytes(hash) }
                hashes[keyed] = keyHash
                rill_prefetch(slots.unsafelyUnwrapped + probing.home(keyHash))
            }
            let listed = index + Self.listLead
            if listed >= 0, listed < count {
                let (slot, found) = entries[listed]._withUnsafeGuaranteedRef { row in
                    row.key.withUnsafeBytes { find($0, hash: hashes[listed]) }
                }
                if found {
                    // The list's storage, read from the slot's array without touching it.
                    let list = withUnsafeBytes(of: &slots.unsafelyUnwrapped[slot].ids) {
                        $0.load(as: UnsafeRawPointer.self)
                    }
                    lists[listed] = list
                    rill_prefetch(list)
                }
            }
            let appended = index + Self.endLead
            if appended >= 0, appended < count, let list = lists[appended] {
                // Where the holder goes: past the list's count, read from its header (come by now).
                let listCount = list.load(fromByteOffset: Self.arrayCountOffset, as: Int.self)
                rill_prefetch(list + Self.arrayElementsOffset + listCount * MemoryLayout<Int32>.stride)
            }
            if index >= 0 {
                entries[index]._withUnsafeGuaranteedRef { row in
                    row.key.withUnsafeBytes { addHoldingLock($0, id, hash: hashes[index]) }
                }
            }
        }
    }

    /// Asks for the first two cache lines of an array's storage (its header and first elements).
    @inline(__always)
    private static func prefetchArray(_ storage: UnsafeRawPointer) {
        rill_prefetch(storage)
        rill_prefetch(storage + arrayElementsOffset)
    }

    /// Where an array's storage keeps its count, and where its elements start: the standard
    /// library's layout of a contiguous array's storage (an object header of two words, the
    /// count, the capacity, then the elements). Read only for prefetch hints, whose addresses may
    /// be wrong without harm; `HolderIndexTests` checks the layout still holds.
    static let arrayCountOffset = 16
    static let arrayElementsOffset = 32

    /// How many rows ahead of the row entered its row, its key, its home slot, the slot's list
    /// and the list's end are asked for (see `add(_:_:)`).
    private static let rowLead = 20
    private static let keyLead = 16
    private static let slotLead = 12
    private static let listLead = 8
    private static let endLead = 4

    /// Removes `id` as a holder of each of `keys`, under one lock.
    func remove<Keys: Sequence<[UInt8]>>(_ keys: Keys, _ id: Int32) {
        lock.lock()
        defer { lock.unlock() }
        for key in keys { key.withUnsafeBytes { removeHoldingLock($0, id) } }
    }

    /// Removes `id` as a holder of the record of each of `rows`, under one lock.
    func remove(_ rows: HeldRows, _ id: Int32) {
        lock.lock()
        defer { lock.unlock() }
        rows.forEach { row in row.key.withUnsafeBytes { removeHoldingLock($0, id) } }
    }

    func remove(_ key: [UInt8], _ id: Int32) {
        lock.lock()
        defer { lock.unlock() }
        key.withUnsafeBytes { removeHoldingLock($0, id) }
    }

    func holders(of key: [UInt8]) -> [Int32] {
        lock.lock()
        defer { lock.unlock() }
        return key.withUnsafeBytes { key in
            guard count > 0, let slots else { return [] }
            let (slot, found) = find(key, hash: hash(key))
            return found ? slots[slot].ids : []
        }
    }

    /// The number of records held (for tests).
    var recordCount: Int {
        lock.lock()
        defer { lock.unlock() }
        return count
    }

    private func addHoldingLock(_ key: UnsafeRawBufferPointer, _ id: Int32, hash known: UInt64? = nil) {
        if (count + 1) * 4 > capacity * 3 { resize(to: max(16, capacity * 2)) }
        let keyHash = known ?? hash(key)
        let (slot, found) = find(key, hash: keyHash)
        let slots = slots.unsafelyUnwrapped
        if found {
            slots[slot].ids.append(id)
            return
        }
        let inline = InlineKey(key)
        slots[slot] = Slot(
            tag: Self.tag(keyHash, inline), low: inline.low, high: inline.high,
            long: inline.isHeld ? nil : Array(key), ids: [id])
        count += 1
    }

    private func removeHoldingLock(_ key: UnsafeRawBufferPointer, _ id: Int32) {
        guard count > 0, let slots else { return }
        let (slot, found) = find(key, hash: hash(key))
        guard found, let index = slots[slot].ids.firstIndex(of: id) else { return }
        if slots[slot].ids.count > 1 {
            // The list is changed in place.
            slots[slot].ids.swapAt(index, slots[slot].ids.count - 1)
            slots[slot].ids.removeLast()
            return
        }
        slots[slot] = Self.empty
        count -= 1
        // Moves back the entries after the hole whose search would pass over it, so that no
        // search stops early at an empty slot.
        var hole = slot
        var next = probing.next(hole)
        while slots[next].tag != 0 {
            let home = probing.home(slots[next].tag)
            if probing.distance(from: home, to: next) >= probing.distance(from: hole, to: next) {
                swap(&slots[hole], &slots[next])
                hole = next
            }
            next = probing.next(next)
        }
        if capacity > 64, count * 8 < capacity { resize(to: capacity / 2) }
    }

    // MARK: - Slots

    /// The slot of the entry of `key` (found), or the empty slot where it would go; the table
    /// has at least one slot.
    @inline(__always)
    private func find(_ key: UnsafeRawBufferPointer, hash: UInt64) -> (slot: Int, found: Bool) {
        let slots = slots.unsafelyUnwrapped
        let inline = InlineKey(key)
        let tag = Self.tag(hash, inline)
        var slot = probing.home(tag)
        while true {
            let entry = slots + slot
            let stored = entry.pointee.tag
            if stored == 0 { return (slot, false) }
            if stored == tag {
                if inline.isHeld {
                    if entry.pointee.low == inline.low, entry.pointee.high == inline.high { return (slot, true) }
                } else if let long = entry.pointee.long, long.withUnsafeBytes({ sameBytes($0, key) }) {
                    return (slot, true)
                }
            }
            slot = probing.next(slot)
        }
    }

    /// The key's hash under this table's seed.
    @inline(__always)
    private func hash(_ key: UnsafeRawBufferPointer) -> UInt64 {
        UInt64(bitPattern: Int64(KeyHash.hash(key, seed: seed)))
    }

    /// Makes room for `count` entries in all without growing again: as few slots as keep the
    /// table at most three-quarters full (a table grown by doubling may be more than half empty,
    /// and its slots are 40 bytes).
    private func reserveCapacity(_ count: Int) {
        let wanted = LinearProbing.slots(for: count)
        if wanted > capacity { resize(to: wanted) }
    }

    private func resize(to newCapacity: Int) {
        let old = (slots: slots, capacity: capacity)
        let grown = UnsafeMutablePointer<Slot>.allocate(capacity: newCapacity)
        grown.initialize(repeating: Self.empty, count: newCapacity)
        slots = grown
        probing.capacity = newCapacity
        guard let oldSlots = old.slots else { return }
        for index in 0..<old.capacity {
            let entry = (oldSlots + index).move()
            guard entry.tag != 0 else { continue }
            var slot = probing.home(entry.tag)
            while grown[slot].tag != 0 { slot = probing.next(slot) }
            grown[slot] = entry
        }
        oldSlots.deallocate()
    }

    private static let empty = Slot(tag: 0, low: 0, high: 0, long: nil, ids: [])

    /// A used slot's tag: `hash` but its lowest byte, and there the key's length plus one
    /// (0xFF for a key of more than 16 bytes). The home slot is picked by the hash's high bits.
    @inline(__always)
    private static func tag(_ hash: UInt64, _ key: InlineKey) -> UInt64 {
        hash & ~0xFF | UInt64(key.isHeld ? key.length + 1 : 0xFF)
    }
}
