import Foundation

/// Which live queries of one entity hold which records: the follower asks it which queries a
/// change of a record may remove or move, instead of asking every query.
final class HolderIndex: @unchecked Sendable {
    // Sendable: the table is read and written under `lock` (the queries of a commit may apply
    // on two threads at once, each entering its own rows).
    private let lock = NSLock()
    private var table: [[UInt8]: [Int32]] = [:]

    func add(_ key: [UInt8], _ id: Int32) {
        lock.lock()
        defer { lock.unlock() }
        table[key, default: []].append(id)
    }

    /// Enters `id` as a holder of each of `keys`, under one lock.
    func add<Keys: Sequence<[UInt8]>>(_ keys: Keys, _ id: Int32) {
        lock.lock()
        defer { lock.unlock() }
        for key in keys { table[key, default: []].append(id) }
    }

    /// Removes `id` as a holder of each of `keys`, under one lock.
    func remove<Keys: Sequence<[UInt8]>>(_ keys: Keys, _ id: Int32) {
        lock.lock()
        defer { lock.unlock() }
        for key in keys { removeHoldingLock(key, id) }
    }

    func remove(_ key: [UInt8], _ id: Int32) {
        lock.lock()
        defer { lock.unlock() }
        removeHoldingLock(key, id)
    }

    private func removeHoldingLock(_ key: [UInt8], _ id: Int32) {
        // One hash lookup; the list is changed in place.
        guard let slot = table.index(forKey: key) else { return }
        if table.values[slot].count == 1 {
            if table.values[slot][0] == id { table.remove(at: slot) }
            return
        }
        guard let index = table.values[slot].firstIndex(of: id) else { return }
        table.values[slot].swapAt(index, table.values[slot].count - 1)
        table.values[slot].removeLast()
    }

    func holders(of key: [UInt8]) -> [Int32] {
        lock.lock()
        defer { lock.unlock() }
        return table[key] ?? []
    }
}
