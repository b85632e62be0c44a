/// The rows a live query holds, by identifier key: their owner.
///
/// A ``KeyedObjects`` table of row references: 8 bytes a slot, the key read from the row itself.
/// A `Dictionary` from key to row takes 16 bytes a slot and a copy of every key's reference, for
/// as many rows, and reads a key's storage at every slot a search passes; a query holding 50,000
/// rows pays the difference 50,000 times.
///
/// Owned by one query (on the follower's thread); not shared.
final class HeldRows {
    private let table = KeyedObjects<LiveEntry>()

    var count: Int { table.count }

    var isEmpty: Bool { table.isEmpty }

    /// The held row with identifier key `key`.
    subscript(key: [UInt8]) -> LiveEntry? {
        table.object(for: key)
    }

    /// Holds `row` in place of the row with its key, which is returned.
    @discardableResult
    func insert(_ row: LiveEntry) -> LiveEntry? {
        table.insert(row)
    }

    /// Stops holding the row with identifier key `key`, and returns it.
    @discardableResult
    func remove(_ key: [UInt8]) -> LiveEntry? {
        table.remove(key)
    }

    /// Makes room for `count` rows in all without growing again.
    func reserveCapacity(_ count: Int) {
        table.reserveCapacity(count)
    }

    /// Every held row, in no order.
    var rows: [LiveEntry] {
        var rows: [LiveEntry] = []
        rows.reserveCapacity(count)
        table.forEach { rows.append($0) }
        return rows
    }

    func forEach(_ body: (LiveEntry) throws -> Void) rethrows {
        try table.forEach(body)
    }

    /// Every held row, in no order, unretained: they are valid while they are held.
    func references() -> [Unmanaged<LiveEntry>] {
        var references: [Unmanaged<LiveEntry>] = []
        references.reserveCapacity(count)
        table.forEach { references.append(Unmanaged.passUnretained($0)) }
        return references
    }

    /// Lets go of every row; returns them.
    func removeAll() -> [LiveEntry] {
        table.removeAll()
    }
}

extension LiveEntry: KeyedObject {
    var tableKey: [UInt8] { key }
}
