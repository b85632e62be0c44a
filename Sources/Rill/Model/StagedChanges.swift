/// A context's changes awaiting a save, in the order they were first staged.
///
/// Staging the same identifier twice keeps one change, the latest: an insert after a delete
/// replaces, a delete after an insert deletes.
struct StagedChanges: Sendable {
    struct Key: Hashable, Sendable {
        var entity: String
        var id: [UInt8]
    }

    enum Change: Sendable {
        case upsert(any PersistentModel)
        case delete
    }

    private struct Entry: Sendable {
        var change: Change
        /// Which staging produced this change; a save removes only what it wrote.
        var stamp: UInt64
    }

    private var order: [Key] = []
    private var entries: [Key: Entry] = [:]
    private var nextStamp: UInt64 = 0

    var isEmpty: Bool { entries.isEmpty }
    var count: Int { entries.count }

    var changesInOrder: some Sequence<(key: Key, change: Change)> {
        order.lazy.compactMap { key in entries[key].map { (key, $0.change) } }
    }

    mutating func stage(_ change: Change, for key: Key) {
        nextStamp += 1
        if entries.updateValue(Entry(change: change, stamp: nextStamp), forKey: key) == nil {
            order.append(key)
        }
    }

    /// Discards every change (stamps keep counting, so a save in flight cannot mistake new changes for its own).
    mutating func removeAll() {
        order.removeAll()
        entries.removeAll()
    }

    /// Removes the changes that `saved` held, unless they were staged again since.
    mutating func removeSaved(_ saved: StagedChanges) {
        for (key, entry) in saved.entries where entries[key]?.stamp == entry.stamp {
            entries[key] = nil
        }
        if entries.isEmpty {
            order.removeAll()
        } else {
            order.removeAll { entries[$0] == nil }
        }
    }
}
