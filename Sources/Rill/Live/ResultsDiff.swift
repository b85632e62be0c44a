/// The change between two arbitrary result lists (a descriptor change), by identifier.
enum ResultsDiff {
    /// Rows only in `old` are removed, rows only in `new` inserted; of the rows in both, the
    /// longest run that keeps its relative order stays, the others move, each with its old and
    /// new model. A row that stays is an update when its key is in `changed` (the records
    /// written between the two lists' commits; empty for two lists of one commit).
    static func between<T>(
        old: [[UInt8]], oldModels: [T], new: [[UInt8]], newModels: [T], changed: Set<[UInt8]> = [],
        sequence: UInt64
    ) -> ResultsChange<T> {
        var change = ResultsChange<T>(sequence: sequence, removals: [], insertions: [], moves: [], updates: [])
        var newOffsets: [[UInt8]: Int] = [:]
        newOffsets.reserveCapacity(new.count)
        for (offset, key) in new.enumerated() { newOffsets[key] = offset }
        var kept: Set<[UInt8]> = []
        var common: [(old: Int, new: Int)] = []
        for (offset, key) in old.enumerated() {
            if let newOffset = newOffsets[key] {
                common.append((offset, newOffset))
                kept.insert(key)
            } else {
                change.removals.append(.init(offset: offset, element: oldModels[offset]))
            }
        }
        for (offset, key) in new.enumerated() where !kept.contains(key) {
            change.insertions.append(.init(offset: offset, element: newModels[offset]))
        }
        let stay = longestIncreasingSubsequence(common.map { $0.new })
        for (index, pair) in common.enumerated() where !stay.contains(index) {
            change.moves.append(
                .init(from: pair.old, to: pair.new, oldElement: oldModels[pair.old], element: newModels[pair.new]))
        }
        change.moves.sort { $0.to < $1.to }
        if !changed.isEmpty {
            for (index, pair) in common.enumerated() where stay.contains(index) && changed.contains(old[pair.old]) {
                change.updates.append(
                    .init(
                        oldOffset: pair.old, offset: pair.new, oldElement: oldModels[pair.old],
                        element: newModels[pair.new]))
            }
        }
        return change
    }

    /// The indices of a longest strictly increasing subsequence of `values` (O(n log n)).
    static func longestIncreasingSubsequence(_ values: [Int]) -> Set<Int> {
        guard values.count > 1 else { return Set(values.indices) }
        // tails[k]: the index of the smallest last value of an increasing run of length k + 1.
        var tails: [Int] = []
        var previous = [Int](repeating: -1, count: values.count)
        for (index, value) in values.enumerated() {
            var low = 0
            var high = tails.count
            while low < high {
                let middle = (low + high) / 2
                if values[tails[middle]] < value { low = middle + 1 } else { high = middle }
            }
            if low > 0 { previous[index] = tails[low - 1] }
            if low == tails.count { tails.append(index) } else { tails[low] = index }
        }
        var result: Set<Int> = []
        var current = tails.last ?? -1
        while current >= 0 {
            result.insert(current)
            current = previous[current]
        }
        return result
    }

    /// `between` for results loaded again: an update for each row that stays whose record is in
    /// `changed` (written between the two loads) or, when that is unknown (nil: commits compacted
    /// before they were read), whose model encodes differently.
    static func reloaded<T>(
        old: [[UInt8]], oldModels: [T], new: [[UInt8]], newModels: [T], changed: Set<[UInt8]>?, sequence: UInt64
    ) -> ResultsChange<T> {
        between(
            old: old, oldModels: oldModels, new: new, newModels: newModels,
            changed: changed ?? differing(old: old, oldModels: oldModels, new: new, newModels: newModels),
            sequence: sequence)
    }

    /// The keys of the rows in both lists whose models (or records) differ, as their stored
    /// encodings tell. A model that does not encode counts as changed.
    private static func differing<T>(old: [[UInt8]], oldModels: [T], new: [[UInt8]], newModels: [T]) -> Set<[UInt8]> {
        func encoding(_ model: T) -> [UInt8]? {
            if let row = model as? QueryRow { return row.record.recordBytes() }
            guard let model = model as? any PersistentModel else { return nil }
            return try? ModelContext.encode(model)
        }
        var oldOffsets: [[UInt8]: Int] = [:]
        for (offset, key) in old.enumerated() { oldOffsets[key] = offset }
        var changed: Set<[UInt8]> = []
        for (offset, key) in new.enumerated() {
            guard let oldOffset = oldOffsets[key] else { continue }
            let before = encoding(oldModels[oldOffset])
            if before == nil || before != encoding(newModels[offset]) { changed.insert(key) }
        }
        return changed
    }
}
