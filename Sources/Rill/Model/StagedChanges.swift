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

        /// The hash computed when the key was made.
        var cachedHash: Int { hash }

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
    private var positions: PositionTable?
    private var lastStamp: UInt64 = 0

    var isEmpty: Bool { entries.isEmpty }

    mutating func stage(_ change: Change, for key: Key) {
        lastStamp += 1
        guard positions != nil else {
            entries.append(Entry(key: key, change: change, stamp: lastStamp))
            return
        }
        // One table operation in the common case (a key staged for the first time).
        if let position = positions!.insert(key, at: entries.count, in: entries) {
            entries[position].change = change
            entries[position].stamp = lastStamp
        } else {
            entries.append(Entry(key: key, change: change, stamp: lastStamp))
        }
    }

    /// Builds the index, folding repeated stagings of a key into its first place.
    mutating func index() {
        guard positions == nil else { return }
        var table = PositionTable(capacity: entries.count)
        var repeated = false
        for (position, entry) in entries.enumerated() {
            if table.insert(entry.key, at: position, in: entries) != nil {
                repeated = true
                break
            }
        }
        if repeated {
            // Rare: rebuild with one entry a key, the latest change at the first place.
            var unique: [Entry] = []
            unique.reserveCapacity(entries.count)
            table = PositionTable(capacity: entries.count)
            for entry in entries {
                if let position = table.insert(entry.key, at: unique.count, in: unique) {
                    unique[position].change = entry.change
                    unique[position].stamp = entry.stamp
                } else {
                    unique.append(entry)
                }
            }
            entries = unique
        }
        positions = table
    }

    /// The staged change for `key`, if any.
    mutating func change(for key: Key) -> Change? {
        index()
        return positions!.position(of: key, in: entries).map { entries[$0].change }
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
            guard let position = savedPositions.position(of: entry.key, in: saved.entries) else { return true }
            return saved.entries[position].stamp != entry.stamp
        }
        entries = remaining
        positions = nil
    }
}

/// Key → position in an array of staged entries: open addressing on the keys' cached hashes.
///
/// A `Dictionary` seeds a `Hasher` for every operation; indexing a save of 100,000 models that
/// way cost more than staging them. Positions are stored plus one, so zero marks an empty slot.
struct PositionTable: Sendable {
    private var slots: [Int32]
    private var count = 0

    init(capacity: Int) {
        var size = 16
        while size < capacity * 2 { size <<= 1 }
        slots = Array(repeating: 0, count: size)
    }

    /// The position of `key` in `entries`, or nil.
    func position(of key: StagedChanges.Key, in entries: [StagedChanges.Entry]) -> Int? {
        let mask = slots.count - 1
        var slot = key.cachedHash & mask
        while slots[slot] != 0 {
            let position = Int(slots[slot]) - 1
            if entries[position].key == key { return position }
            slot = (slot + 1) & mask
        }
        return nil
    }

    /// Records that `key` is at `position`, unless `entries` already holds it: then returns
    /// where, and records nothing.
    mutating func insert(
        _ key: StagedChanges.Key, at position: Int, in entries: [StagedChanges.Entry]
    ) -> Int? {
        if (count + 1) * 2 > slots.count { grow(entries) }
        let mask = slots.count - 1
        var slot = key.cachedHash & mask
        while slots[slot] != 0 {
            let existing = Int(slots[slot]) - 1
            if entries[existing].key == key { return existing }
            slot = (slot + 1) & mask
        }
        slots[slot] = Int32(position + 1)
        count += 1
        return nil
    }

    private mutating func grow(_ entries: [StagedChanges.Entry]) {
        let old = slots
        slots = Array(repeating: 0, count: old.count * 2)
        let mask = slots.count - 1
        for stored in old where stored != 0 {
            var slot = entries[Int(stored) - 1].key.cachedHash & mask
            while slots[slot] != 0 { slot = (slot + 1) & mask }
            slots[slot] = stored
        }
    }
}
