import CLMDB

/// A position in a database, valid inside the closure given to `withCursor`.
package struct Cursor {
    /// A key and its value, pointing into the map (valid until the transaction ends).
    package struct Entry {
        package let key: UnsafeRawBufferPointer
        package let value: UnsafeRawBufferPointer

        @usableFromInline
        init(key: UnsafeRawBufferPointer, value: UnsafeRawBufferPointer) {
            self.key = key
            self.value = value
        }
    }

    @usableFromInline let pointer: OpaquePointer
    @usableFromInline let maxKeySize: Int

    @usableFromInline
    init(pointer: OpaquePointer, maxKeySize: Int) {
        self.pointer = pointer
        self.maxKeySize = maxKeySize
    }

    /// Moves to the first entry.
    @inlinable
    package mutating func first() throws -> Entry? { try move(MDB_FIRST) }
    /// Moves to the last entry.
    @inlinable
    package mutating func last() throws -> Entry? { try move(MDB_LAST) }
    /// Moves to the next entry.
    @inlinable
    package mutating func next() throws -> Entry? { try move(MDB_NEXT) }
    /// Moves to the previous entry.
    @inlinable
    package mutating func previous() throws -> Entry? { try move(MDB_PREV) }

    /// Moves to the first entry whose key is greater than or equal to `key`.
    @inlinable
    package mutating func seek(atOrAfter key: UnsafeRawBufferPointer) throws -> Entry? {
        guard key.count >= 1, key.count <= maxKeySize else {
            throw LMDBError(code: MDB_BAD_VALSIZE, message: "a key of \(key.count) bytes")
        }
        var k = MDB_val(key)
        var v = MDB_val()
        let rc = mdb_cursor_get(pointer, &k, &v, MDB_SET_RANGE)
        if rc == MDB_NOTFOUND { return nil }
        try check(rc, "mdb_cursor_get")
        return Entry(key: UnsafeRawBufferPointer(k), value: UnsafeRawBufferPointer(v))
    }

    /// Moves to the first entry whose key is greater than or equal to `key`.
    @inlinable
    package mutating func seek(atOrAfter key: [UInt8]) throws -> Entry? {
        try key.withUnsafeBytes { try seek(atOrAfter: $0) }
    }

    /// Calls `body` with each entry from the first key at or after `start` (the first key when
    /// nil), in key order, until `body` returns false; returns false when `body` stopped the walk.
    ///
    /// The loop of every forward walk, here so that the cursor's moves are inlined into it: a
    /// scan then makes two calls a record, LMDB's and `body`'s.
    package mutating func forEach(
        from start: [UInt8]?,
        _ body: (_ key: UnsafeRawBufferPointer, _ value: UnsafeRawBufferPointer) throws -> Bool
    ) throws -> Bool {
        var current = try start.map { try seek(atOrAfter: $0) } ?? move(MDB_FIRST)
        while let entry = current {
            guard try body(entry.key, entry.value) else { return false }
            current = try move(MDB_NEXT)
        }
        return true
    }

    @inlinable @inline(__always)
    mutating func move(_ op: MDB_cursor_op) throws -> Entry? {
        var k = MDB_val()
        var v = MDB_val()
        let rc = mdb_cursor_get(pointer, &k, &v, op)
        if rc == MDB_NOTFOUND { return nil }
        try check(rc, "mdb_cursor_get")
        return Entry(key: UnsafeRawBufferPointer(k), value: UnsafeRawBufferPointer(v))
    }
}
