import RillStorage

/// The store as one read sees it: the records, indexes and log as of one commit.
///
/// A snapshot is valid only inside the closure it is handed to (``Store/read(_:)``): it is never
/// kept, never used across an `await` and never between two notifications (a held reader keeps
/// LMDB from reusing pages, and the file grows). The buffers it hands out are valid only during
/// the call that hands them out.
@usableFromInline
package struct StoreSnapshot {
    let transaction: ReadTransaction
    /// Records of one entity as this snapshot has them, which a live query's load takes instead
    /// of reading them again when an index walk lists them (see `SharedRows.Known`).
    var knownRecords: SharedRows.Known?

    init(_ transaction: ReadTransaction) { self.transaction = transaction }

    /// The LMDB transaction's ID: the same for every read of the same state of the file.
    var snapshotID: UInt64 { transaction.transactionID }

    // MARK: - Records

    /// The stored record of `entity` with identifier key `key`, or nil.
    @inline(__always)
    package func record(of entity: EntityStorage, key: UnsafeRawBufferPointer) throws -> UnsafeRawBufferPointer? {
        try transaction.get(key, in: entity.database)
    }

    /// The stored record of `entity` with identifier key `key`, or nil.
    package func record(of entity: EntityStorage, key: [UInt8]) throws -> UnsafeRawBufferPointer? {
        try transaction.get(key, in: entity.database)
    }

    /// Calls `body` with the identifier key and record of each of `entity`'s records, in
    /// identifier order, until `body` returns false; returns false when `body` stopped the walk.
    @inline(__always) @discardableResult
    package func forEachRecord(
        of entity: EntityStorage,
        _ body: (_ key: UnsafeRawBufferPointer, _ record: UnsafeRawBufferPointer) throws -> Bool
    ) throws -> Bool {
        try transaction.forEachEntry(in: entity.database, body)
    }

    /// The number of records of `entity`.
    package func recordCount(of entity: EntityStorage) throws -> Int {
        try transaction.count(of: entity.database)
    }

    // MARK: - Indexes

    /// Calls `body` with the key and value of each entry of `index`, in key order, until `body`
    /// returns false.
    package func forEachEntry(
        of index: IndexStorage, _ body: (_ key: UnsafeRawBufferPointer, _ value: UnsafeRawBufferPointer) throws -> Bool
    ) throws {
        try transaction.forEachEntry(in: index.database, body)
    }

    /// The number of entries (keys) of `index`.
    package func entryCount(of index: IndexStorage) throws -> Int {
        try transaction.count(of: index.database)
    }

    /// Calls `body` with the key and value of each entry of `index` from the key `lower` to
    /// before the key `upper` (to the end when nil), in key order, until `body` returns false;
    /// returns false when `body` stopped before the range's end.
    @inline(__always) @discardableResult
    package func forEachEntry(
        of index: IndexStorage, from lower: [UInt8], before upper: [UInt8]?,
        _ body: (_ key: UnsafeRawBufferPointer, _ value: UnsafeRawBufferPointer) throws -> Bool
    ) throws -> Bool {
        // The loop is written here, over the cursor, rather than through a walk taking a closure:
        // a query reads every index entry through it, and each closure between the cursor and
        // `body` was a call per entry (one typed fetch of fifty rows in twenty).
        try transaction.withCursor(index.database) { cursor in
            var current = try cursor.seek(atOrAfter: lower)
            while let entry = current {
                if let upper, !entry.key.lexicographicallyPrecedes(upper) { return true }
                guard try body(entry.key, entry.value) else { return false }
                current = try cursor.next()
            }
            return true
        }
    }

    /// Calls `body` with the key and value of each entry of `index` before the key `upper` (from
    /// the last key when nil) down to the key `lower`, last key first, until `body` returns
    /// false; returns false when `body` stopped before the range's start.
    @inline(__always) @discardableResult
    package func forEachEntryBackwards(
        of index: IndexStorage, from lower: [UInt8], before upper: [UInt8]?,
        _ body: (_ key: UnsafeRawBufferPointer, _ value: UnsafeRawBufferPointer) throws -> Bool
    ) throws -> Bool {
        try transaction.withCursor(index.database) { cursor in
            var current: Cursor.Entry?
            if let upper {
                // The entry before the first key at or after `upper`: the last one below it.
                current = try cursor.seek(atOrAfter: upper) == nil ? cursor.last() : cursor.previous()
            } else {
                current = try cursor.last()
            }
            while let entry = current {
                if entry.key.lexicographicallyPrecedes(lower) { return true }
                guard try body(entry.key, entry.value) else { return false }
                current = try cursor.previous()
            }
            return true
        }
    }
}
