import Foundation

/// A row of a live query's results: its identifier's storage key and its order key; its model
/// is in a subclass (`LiveRow<T>`, `LiveRecordRow`).
///
/// Rows are immutable objects of a class that is not generic, so that the structures that hold
/// them (the ordered list, the table by key) are compiled for this one type, whatever the model.
class LiveEntry: @unchecked Sendable {
    // Sendable: immutable, and the model in the subclass is Sendable.
    let key: [UInt8]
    /// Bytes whose order is the row's order in the results (sort values, then identifier), when
    /// the sort allows it; rows are then compared with one `memcmp`.
    let order: [UInt8]?
    /// The order key's first sixteen bytes as two big-endian words, zero past its end (zero
    /// without one): what sorts and the ordered list compare first, read from the row itself
    /// rather than from its order key's array (a cache miss more a row, in a load).
    let orderPrefix: (UInt64, UInt64)

    init(key: [UInt8], order: [UInt8]?) {
        self.key = key
        self.order = order
        orderPrefix = order.map(OrderKey.prefix) ?? (0, 0)
    }
}

extension LiveEntry {
    /// `rows`, each with an order key, in the order of their keys.
    ///
    /// Sorted by the keys' first sixteen bytes (`OrderKey.prefix`), taken once a row, and by the
    /// whole keys only where those agree: a sort comparing the keys themselves read two arrays
    /// through two rows at every comparison.
    /// Rows that come in order already (a walk of an index in the sort's order) are returned as
    /// they are, after the one pass that reads their prefixes.
    static func sortedByOrder(_ rows: [LiveEntry]) -> [LiveEntry] {
        var sorted = rows
        sortByOrder(&sorted)
        return sorted
    }

    /// Sorts `rows` in place as `sortedByOrder(_:)` returns them: the rows are moved into their
    /// places along the permutation's cycles, not copied into a new array (a retain of each row,
    /// a write to memory a load of many rows has mostly let go of from its caches).
    static func sortByOrder(_ rows: inout [LiveEntry]) {
        guard rows.count > 1 else { return }
        var keyed: [(prefix: (UInt64, UInt64), index: Int32)] = []
        keyed.reserveCapacity(rows.count)
        var inOrder = true
        for (index, row) in rows.enumerated() {
            let prefix = row.orderPrefix
            if inOrder, index > 0, case let previous = keyed[index - 1].prefix, !(previous < prefix) {
                inOrder = previous == prefix && OrderKey.precedes(rows[index - 1].order!, row.order!)
            }
            keyed.append((prefix, Int32(index)))
        }
        if inOrder { return }
        keyed.sort { a, b in
            if a.prefix != b.prefix { return a.prefix < b.prefix }
            return OrderKey.precedes(rows[Int(a.index)].order!, rows[Int(b.index)].order!)
        }
        // The row at place `i` comes from place `keyed[i].index`; a place done is marked by
        // pointing at itself.
        rows.withUnsafeMutableBufferPointer { buffer in
            guard let base = buffer.baseAddress else { return }
            for start in keyed.indices where Int(keyed[start].index) != start {
                let first = (base + start).move()
                var place = start
                while true {
                    let from = Int(keyed[place].index)
                    keyed[place].index = Int32(place)
                    if from == start {
                        (base + place).initialize(to: first)
                        break
                    }
                    (base + place).initialize(to: (base + from).move())
                    place = from
                }
            }
        }
    }
}
