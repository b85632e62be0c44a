import CPrefetch
import Foundation

/// Whether two buffers hold the same bytes.
@inline(__always)
func sameBytes(_ lhs: UnsafeRawBufferPointer, _ rhs: UnsafeRawBufferPointer) -> Bool {
    guard lhs.count == rhs.count else { return false }
    guard let left = lhs.baseAddress, let right = rhs.baseAddress, left != right else { return true }
    return memcmp(left, right, lhs.count) == 0
}

/// An object a ``KeyedObjects`` table finds by the bytes of its key.
protocol KeyedObject: AnyObject {
    /// The key; it must not change while the object is in a table.
    var tableKey: [UInt8] { get }
    /// Whether `key` is the object's key: by default its bytes compared with `tableKey`'s.
    func hasTableKey(_ key: UnsafeRawBufferPointer) -> Bool
}

extension KeyedObject {
    @inline(__always)
    func hasTableKey(_ key: UnsafeRawBufferPointer) -> Bool {
        tableKey.withUnsafeBytes { sameBytes($0, key) }
    }
}

/// An open-addressing table of objects found by their byte keys, searched by linear probing.
///
/// Each slot is one word: a retained reference in its low 56 bits and, in its top byte, seven bits
/// of the key's hash (its lowest) with the high bit set (0 for an empty slot). Heap addresses on the 64-bit
/// platforms Rill runs on leave the top byte zero (Swift's own layout of references counts on it).
/// A search compares those bytes first and reads an object, and its key, only where they agree —
/// about once in 128 for another key — so a probe costs no memory read outside the slots. A
/// `Dictionary` compares the key of every occupied slot it passes: a read of the key's storage, a
/// cache miss each, in tables of a live query's rows.
///
/// The table has any number of slots, not only a power of two: a hash picks its home slot by
/// its high bits, scaled to the number of slots (a multiplication, not a division). A table
/// sized for its objects (``reserveCapacity(_:)``, as a live query's held rows are at a load) is
/// then as full as asked whatever their number (at most three-quarters), rather than three-eighths
/// to three-quarters.
///
/// Keys are hashed with SipHash-1-3 (`KeyHash`, the function `Hasher` uses), keyed for each
/// process, so that keys written to collide cannot make a table slow, and seeded for each table.
/// With one function for all tables, the keys of one table taken in its slots' order (as a live
/// query's held keys are entered in the follower's index of holders) arrive in the order of their
/// home slots in the other: they pile up in one stretch of its slots, and each insertion probes
/// along all of that stretch (hundreds of slots a key at a load of many queries). Removal shifts later
/// entries back (no tombstones). Not thread-safe: the owner serializes access.
final class KeyedObjects<Element: KeyedObject> {
    /// Tagged retained references; 0 for an empty slot.
    private var slots: UnsafeMutablePointer<UInt>
    /// The slots' arithmetic, and their number.
    private var probing = LinearProbing()
    /// The number of slots (0 before the first object).
    var capacity: Int { probing.capacity }
    private(set) var count = 0
    /// This table's hash function among `KeyHash`'s.
    private let seed = KeyHash.seed()

    init() {
        slots = Self.noSlots
    }

    deinit {
        for index in 0..<capacity where slots[index] != 0 { Self.reference(slots[index]).release() }
        deallocateSlots()
    }

    var isEmpty: Bool { count == 0 }

    /// The object with `key`.
    func object(for key: UnsafeRawBufferPointer) -> Element? {
        guard count > 0 else { return nil }
        let (slot, found) = find(key, hash: hash(key))
        return found ? Self.reference(slots[slot]).takeUnretainedValue() : nil
    }

    /// Asks for the slot where a search for `key` starts, ahead of the search; returns the key's
    /// hash, for `prefetchObject(hash:)`. A hint.
    @inline(__always)
    func prefetchSlot(of key: UnsafeRawBufferPointer) -> Int {
        let keyHash = hash(key)
        if count > 0 { rill_prefetch(slots + home(keyHash)) }
        return keyHash
    }

    /// Asks for the object a search for a key of hash `keyHash` will compare first: the first
    /// one from its home slot whose slot's bits of the hash agree (the slots read, not the
    /// objects). A hint.
    @inline(__always)
    func prefetchObject(hash keyHash: Int) {
        guard count > 0 else { return }
        let tag = Self.tag(keyHash)
        var slot = home(keyHash)
        while true {
            let word = slots[slot]
            if word == 0 { return }
            if UInt8(truncatingIfNeeded: word >> 56) == tag {
                rill_prefetch(UnsafeRawPointer(bitPattern: word & Self.addressMask))
                return
            }
            slot = probing.next(slot)
        }
    }

    /// The object with `key`, unretained: valid while it is in the table.
    @inline(__always)
    func unretainedObject(for key: UnsafeRawBufferPointer) -> Unmanaged<Element>? {
        guard count > 0 else { return nil }
        let (slot, found) = find(key, hash: hash(key))
        return found ? Self.reference(slots[slot]) : nil
    }

    /// The object with `key`.
    func object(for key: [UInt8]) -> Element? {
        key.withUnsafeBytes { object(for: $0) }
    }

    /// Holds `object` in place of the object with its key, which is returned.
    @discardableResult
    func insert(_ object: Element) -> Element? {
        if (count + 1) * 4 > capacity * 3 { resize(to: max(16, capacity * 2)) }
        let key = object.tableKey
        let keyHash = key.withUnsafeBytes { hash($0) }
        let (slot, found) = key.withUnsafeBytes { find($0, hash: keyHash) }
        let word = Self.word(Unmanaged.passRetained(object), tag: Self.tag(keyHash))
        if found {
            let old = Self.reference(slots[slot]).takeRetainedValue()
            slots[slot] = word
            return old
        }
        slots[slot] = word
        count += 1
        return nil
    }

    /// Removes the object with `key`, and returns it.
    @discardableResult
    func remove(_ key: UnsafeRawBufferPointer) -> Element? {
        guard count > 0 else { return nil }
        let (slot, found) = find(key, hash: hash(key))
        guard found else { return nil }
        var hole = slot
        let object = Self.reference(slots[hole]).takeRetainedValue()
        slots[hole] = 0
        count -= 1
        // Moves back the objects after the hole whose search would pass over it, so that no
        // search stops early at an empty slot.
        var next = probing.next(hole)
        while slots[next] != 0 {
            let home = self.home(hash(of: slots[next]))
            // The object may move to the hole when the hole lies between its home and its slot.
            if probing.distance(from: home, to: next) >= probing.distance(from: hole, to: next) {
                slots[hole] = slots[next]
                slots[next] = 0
                hole = next
            }
            next = probing.next(next)
        }
        if capacity > 64, count * 8 < capacity { resize(to: capacity / 2) }
        return object
    }

    /// Removes the object with `key`, and returns it.
    @discardableResult
    func remove(_ key: [UInt8]) -> Element? {
        key.withUnsafeBytes { remove($0) }
    }

    /// Makes room for `count` objects in all without growing again: as few slots as keep the
    /// table at most three-quarters full.
    func reserveCapacity(_ count: Int) {
        let wanted = LinearProbing.slots(for: count)
        if wanted > capacity { resize(to: wanted) }
    }

    /// Calls `body` with every object, in no order; `body` must not change the table.
    func forEach(_ body: (Element) throws -> Void) rethrows {
        for index in 0..<capacity where slots[index] != 0 {
            try Self.reference(slots[index])._withUnsafeGuaranteedRef { try body($0) }
        }
    }

    /// Removes every object; returns them.
    func removeAll() -> [Element] {
        var objects: [Element] = []
        objects.reserveCapacity(count)
        for index in 0..<capacity where slots[index] != 0 {
            objects.append(Self.reference(slots[index]).takeRetainedValue())
            slots[index] = 0
        }
        count = 0
        if capacity > 64 {
            deallocateSlots()
            probing.capacity = 0
        }
        return objects
    }

    /// Removes the objects `shouldRemove` picks; returns how many.
    @discardableResult
    func removeAll(where shouldRemove: (Element) throws -> Bool) rethrows -> Int {
        var picked: [[UInt8]] = []
        try forEach { if try shouldRemove($0) { picked.append($0.tableKey) } }
        for key in picked { remove(key) }
        return picked.count
    }

    /// The mean number of slots a search for an object in the table reads (1 when every object
    /// sits in its home slot; about 2.5 at three-quarters full with keys placed at random): for
    /// tests, it reads every object's key.
    var meanProbeLength: Double {
        guard count > 0 else { return 0 }
        var total = 0
        for index in 0..<capacity where slots[index] != 0 {
            total += probing.distance(from: home(hash(of: slots[index])), to: index) + 1
        }
        return Double(total) / Double(count)
    }

    // MARK: - Slots

    /// The slot of the object with `key` (found), or the empty slot where it would go; the table
    /// has at least one slot.
    @inline(__always)
    private func find(_ key: UnsafeRawBufferPointer, hash: Int) -> (slot: Int, found: Bool) {
        let tag = Self.tag(hash)
        var slot = home(hash)
        while true {
            let word = slots[slot]
            if word == 0 { return (slot, false) }
            if UInt8(truncatingIfNeeded: word >> 56) == tag {
                let equal = Self.reference(word)._withUnsafeGuaranteedRef { element in
                    element.hasTableKey(key)
                }
                if equal { return (slot, true) }
            }
            slot = probing.next(slot)
        }
    }

    /// The home slot of a key of hash `hash`.
    @inline(__always)
    private func home(_ hash: Int) -> Int {
        probing.home(UInt64(UInt(bitPattern: hash)))
    }

    private func resize(to newCapacity: Int) {
        let old = (slots: slots, capacity: capacity)
        slots = .allocate(capacity: newCapacity)
        slots.initialize(repeating: 0, count: newCapacity)
        probing.capacity = newCapacity
        for index in 0..<old.capacity where old.slots[index] != 0 {
            // The tag is the hash's: only the slot is new.
            var slot = home(hash(of: old.slots[index]))
            while slots[slot] != 0 { slot = probing.next(slot) }
            slots[slot] = old.slots[index]
        }
        if old.capacity > 0 { old.slots.deallocate() }
    }

    private func deallocateSlots() {
        guard capacity > 0 else { return }
        slots.deallocate()
        slots = Self.noSlots
    }

    /// The reference in a used slot's word.
    @inline(__always)
    private static func reference(_ word: UInt) -> Unmanaged<Element> {
        Unmanaged.fromOpaque(UnsafeRawPointer(bitPattern: word & addressMask).unsafelyUnwrapped)
    }

    /// A used slot's word: `reference`'s address with `tag` in the top byte.
    @inline(__always)
    private static func word(_ reference: Unmanaged<Element>, tag: UInt8) -> UInt {
        let address = UInt(bitPattern: reference.toOpaque())
        precondition(address & ~addressMask == 0, "a heap address uses its top byte: \(address)")
        return address | UInt(tag) << 56
    }

    private static var addressMask: UInt { (1 << 56) - 1 }

    /// The hash of the key of the object in a used slot's word.
    @inline(__always)
    private func hash(of word: UInt) -> Int {
        Self.reference(word)._withUnsafeGuaranteedRef { element in element.tableKey.withUnsafeBytes { hash($0) } }
    }

    @inline(__always)
    private func hash(_ key: UnsafeRawBufferPointer) -> Int {
        KeyHash.hash(key, seed: seed)
    }

    /// The slot's tag of a key's hash: its lowest seven bits (the high ones pick the slot), and
    /// the high bit that marks the slot used.
    @inline(__always)
    private static func tag(_ hash: Int) -> UInt8 {
        UInt8(truncatingIfNeeded: hash) | 0x80
    }

    /// Placeholders for a table without slots (never read: `count` is 0 and inserting allocates).
    private static var noSlots: UnsafeMutablePointer<UInt> {
        UnsafeMutablePointer(bitPattern: UInt(MemoryLayout<UInt>.alignment))!
    }
}
