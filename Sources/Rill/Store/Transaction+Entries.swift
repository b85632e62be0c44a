import RillStorage

/// The walks through a database that the store and the log make, written once.
///
/// Each hands `body` the entries in key order (or in reverse), the buffers valid only during the
/// call, until `body` returns false. They stay in this module so that the walk and its body are
/// optimized together, as a cursor loop written in place would be.
extension Transaction {
    /// Calls `body` with each entry of `database` from the first key at or after `start` (the
    /// first key when nil), in key order; returns false when `body` stopped the walk.
    @inline(__always) @discardableResult
    func forEachEntry(
        in database: Database, from start: [UInt8]? = nil,
        _ body: (_ key: UnsafeRawBufferPointer, _ value: UnsafeRawBufferPointer) throws -> Bool
    ) throws -> Bool {
        try withCursor(database) { try $0.forEach(from: start, body) }
    }

    /// Calls `body` with each entry of `database` whose key starts with `prefix`, in key order,
    /// with the key's rest after the prefix.
    func forEachEntry(
        in database: Database, withPrefix prefix: [UInt8],
        _ body: (_ rest: UnsafeRawBufferPointer.SubSequence, _ value: UnsafeRawBufferPointer) throws -> Void
    ) throws {
        try forEachEntry(in: database, from: prefix) { key, value in
            guard key.starts(with: prefix) else { return false }
            try body(key.dropFirst(prefix.count), value)
            return true
        }
    }

    /// Calls `body` with each entry of `database` before the key `end` (from the last key when
    /// nil), newest key first; returns false when `body` stopped the walk.
    @discardableResult
    func forEachEntryBackwards(
        in database: Database, before end: [UInt8]? = nil,
        _ body: (_ key: UnsafeRawBufferPointer, _ value: UnsafeRawBufferPointer) throws -> Bool
    ) throws -> Bool {
        try withCursor(database) { cursor in
            var current: Cursor.Entry?
            if let end {
                current = try cursor.seek(atOrAfter: end)
                current = current == nil ? try cursor.last() : try cursor.previous()
            } else {
                current = try cursor.last()
            }
            while let entry = current {
                guard try body(entry.key, entry.value) else { return false }
                current = try cursor.previous()
            }
            return true
        }
    }

    /// The result of `body` on the last key of `database`, or nil when it is empty.
    func withLastKey<R>(in database: Database, _ body: (UnsafeRawBufferPointer) throws -> R) throws -> R? {
        try withCursor(database) { cursor in try cursor.last().map { try body($0.key) } }
    }

    /// `body` of the last entry of `database` (its key and value), or nil when it is empty.
    func withLastEntry<R>(
        in database: Database, _ body: (UnsafeRawBufferPointer, UnsafeRawBufferPointer) throws -> R
    ) throws -> R? {
        try withCursor(database) { cursor in try cursor.last().map { try body($0.key, $0.value) } }
    }

    /// `body` of the first key of `database`, or nil when it is empty.
    func withFirstKey<R>(in database: Database, _ body: (UnsafeRawBufferPointer) throws -> R) throws -> R? {
        try withCursor(database) { cursor in try cursor.first().map { try body($0.key) } }
    }
}
