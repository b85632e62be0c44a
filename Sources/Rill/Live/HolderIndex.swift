import Foundation

/// Which live queries of one entity hold which records: the follower asks it which queries a
/// change of a record may remove or move, instead of asking every query.
///
/// A ``KeyedObjects`` table of each held record's list of holders: a search reads the key of
/// the one list it finds, not of every slot it passes.
final class HolderIndex: @unchecked Sendable {
    // Sendable: the table is read and written under `lock` (the queries of a commit may apply
    // on two threads at once, each entering its own rows).
    private let lock = NSLock()
    private let table = KeyedObjects<Holders>()

    /// The queries that hold one record.
    private final class Holders: KeyedObject {
        let key: [UInt8]
        /// Read and written only under the index's lock, in accesses that never overlap: a
        /// dynamic exclusivity check would cost more than an append.
        @exclusivity(unchecked) var ids: [Int32]

        init(key: [UInt8], ids: [Int32]) {
            self.key = key
            self.ids = ids
        }

        var tableKey: [UInt8] { key }
    }

    func add(_ key: [UInt8], _ id: Int32) {
        lock.lock()
        defer { lock.unlock() }
        addHoldingLock(key, id)
    }

    /// Enters `id` as a holder of each of `keys`, under one lock.
    func add<Keys: Sequence<[UInt8]>>(_ keys: Keys, _ id: Int32) {
        lock.lock()
        defer { lock.unlock() }
        for key in keys { addHoldingLock(key, id) }
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

    func holders(of key: [UInt8]) -> [Int32] {
        lock.lock()
        defer { lock.unlock() }
        return table.object(for: key)?.ids ?? []
    }

    private func addHoldingLock(_ key: [UInt8], _ id: Int32) {
        if let holders = table.object(for: key) {
            holders.ids.append(id)
        } else {
            table.insert(Holders(key: key, ids: [id]))
        }
    }

    private func removeHoldingLock(_ key: [UInt8], _ id: Int32) {
        guard let holders = table.object(for: key) else { return }
        guard let index = holders.ids.firstIndex(of: id) else { return }
        if holders.ids.count == 1 {
            table.remove(key)
            return
        }
        // The list is changed in place.
        holders.ids.swapAt(index, holders.ids.count - 1)
        holders.ids.removeLast()
    }
}
