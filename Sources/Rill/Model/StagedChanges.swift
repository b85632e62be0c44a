/// A context's changes awaiting a save, in the order they were first staged.
///
/// Staging the same identifier twice keeps one change, the latest: an insert after a delete
/// replaces, a delete after an insert deletes. Saving a hundred thousand models stages a hundred
/// thousand entries, so staging is one hash lookup and an append, and iterating is linear.
package struct StagedChanges: Sendable {
    package struct Key: Hashable, Sendable {
        let entity: String
        let id: [UInt8]
        /// Hashed once: a large save rehashes every key each time the table grows.
        private let hash: Int

        package init(entity: String, id: [UInt8]) {
            self.entity = entity
            self.id = id
            var hasher = Hasher()
            hasher.combine(entity)
            id.withUnsafeBytes { hasher.combine(bytes: $0) }
            hash = hasher.finalize()
        }

        package func hash(into hasher: inout Hasher) { hasher.combine(hash) }

        package static func == (lhs: Key, rhs: Key) -> Bool {
            lhs.hash == rhs.hash && lhs.id == rhs.id && lhs.entity == rhs.entity
        }
    }

    enum Change: Sendable {
        case upsert(any PersistentModel)
        case delete
    }

    struct Entry: Sendable {
        var key: Key
        var change: Change
        /// Which staging produced this change; a save removes only what it wrote.
        var stamp: UInt64
    }

    /// In order of staging. Until the index is built, one key may appear more than once (the
    /// last one wins); once it is built, each key appears once, at its first staging's place.
    private(set) var entries: [Entry] = []
    /// Key → position in `entries`; nil until something needs it. Staging a large batch appends
    /// without hashing, and the index is then built once, at its final size.
    private var positions: [Key: Int]?
    private var lastStamp: UInt64 = 0

    var isEmpty: Bool { entries.isEmpty }

    mutating func stage(_ change: Change, for key: Key) {
        lastStamp += 1
        guard positions != nil else {
            entries.append(Entry(key: key, change: change, stamp: lastStamp))
            return
        }
        // One hash-table operation in the common case (a key staged for the first time).
        if let position = positions!.updateValue(entries.count, forKey: key) {
            positions![key] = position
            entries[position].change = change
            entries[position].stamp = lastStamp
        } else {
            entries.append(Entry(key: key, change: change, stamp: lastStamp))
        }
    }

    /// Builds the index, folding repeated stagings of a key into its first place.
    mutating func index() {
        guard positions == nil else { return }
        var index = [Key: Int](minimumCapacity: entries.count)
        var unique: [Entry] = []
        var repeated = false
        for (position, entry) in entries.enumerated() {
            if index.updateValue(position, forKey: entry.key) != nil {
                repeated = true
                break
            }
        }
        if repeated {
            // Rare: rebuild with one entry a key, the latest change at the first place.
            index.removeAll(keepingCapacity: true)
            unique.reserveCapacity(entries.count)
            for entry in entries {
                if let position = index[entry.key] {
                    unique[position].change = entry.change
                    unique[position].stamp = entry.stamp
                } else {
                    index[entry.key] = unique.count
                    unique.append(entry)
                }
            }
            entries = unique
        }
        positions = index
    }

    /// The staged change for `key`, if any.
    mutating func change(for key: Key) -> Change? {
        index()
        return positions![key].map { entries[$0].change }
    }

    /// Discards every change (stamps keep counting, so a save in flight cannot mistake new changes for its own).
    mutating func removeAll() {
        entries = []
        positions = nil
    }

    /// Removes the changes that `saved` (an indexed snapshot) held, unless they were staged again since.
    mutating func removeSaved(_ saved: StagedChanges) {
        // Nothing staged since the snapshot: drop everything without touching the shared storage.
        if lastStamp == saved.lastStamp {
            removeAll()
            return
        }
        guard let savedPositions = saved.positions else { preconditionFailure("a saved snapshot is indexed") }
        let remaining = entries.filter { entry in
            guard let position = savedPositions[entry.key] else { return true }
            return saved.entries[position].stamp != entry.stamp
        }
        entries = remaining
        positions = nil
    }
}
