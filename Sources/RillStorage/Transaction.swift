import CLMDB

/// Operations common to read and write transactions.
///
/// Buffers returned by a transaction point into LMDB's memory map: they are valid only until the
/// transaction ends (and, in a write transaction, until the next write to the same database).
/// Copy what must outlive it.
package protocol Transaction {
    /// LMDB's `MDB_txn`.
    var pointer: OpaquePointer { get }
    /// The largest key the environment accepts.
    var maxKeySize: Int { get }
}

// MARK: - Reading

extension Transaction {
    /// LMDB's number of the transaction: a read sees the store as the write transaction of that
    /// number left it, so two reads with one number see the same store.
    package var transactionID: UInt64 { UInt64(mdb_txn_id(pointer)) }

    /// The value stored under `key`, or nil.
    @inlinable
    package func get(_ key: UnsafeRawBufferPointer, in database: Database) throws -> UnsafeRawBufferPointer? {
        try validate(key: key, in: database)
        var k = MDB_val(key)
        var v = MDB_val()
        let rc = mdb_get(pointer, database.handle, &k, &v)
        if rc == MDB_NOTFOUND { return nil }
        try check(rc, "mdb_get in \(database.name)")
        return UnsafeRawBufferPointer(v)
    }

    /// The value stored under `key`, or nil.
    package func get(_ key: [UInt8], in database: Database) throws -> UnsafeRawBufferPointer? {
        try key.withUnsafeBytes { try get($0, in: database) }
    }

    /// The number of entries in `database`.
    package func count(of database: Database) throws -> Int {
        var stat = MDB_stat()
        try check(mdb_stat(pointer, database.handle, &stat), "mdb_stat \(database.name)")
        return stat.ms_entries
    }

    /// The bytes of the pages `database` holds (branch, leaf and overflow pages).
    package func byteCount(of database: Database) throws -> Int {
        var stat = MDB_stat()
        try check(mdb_stat(pointer, database.handle, &stat), "mdb_stat \(database.name)")
        return (stat.ms_branch_pages + stat.ms_leaf_pages + stat.ms_overflow_pages) * Int(stat.ms_psize)
    }

    /// Runs `body` with a cursor over `database`; the cursor closes when `body` returns.
    ///
    /// Inlinable, as the cursor's moves are: a walk written over it in another module is then one
    /// loop, its body inlined, with no call through a closure for each entry. (Not so in generic
    /// code, such as an extension of this protocol, where the moves stayed calls: the forward
    /// walk's loop is `Cursor.forEach(from:_:)`, compiled here.)
    @inlinable @inline(__always)
    package func withCursor<R>(_ database: Database, _ body: (inout Cursor) throws -> R) throws -> R {
        var cursorPointer: OpaquePointer?
        try check(mdb_cursor_open(pointer, database.handle, &cursorPointer), "mdb_cursor_open \(database.name)")
        var cursor = Cursor(pointer: cursorPointer!, maxKeySize: maxKeySize)
        defer { mdb_cursor_close(cursorPointer) }
        return try body(&cursor)
    }

    /// Throws unless `key` has 1…`maxKeySize` bytes, before LMDB sees it; the error names the
    /// database.
    @inlinable
    package func validate(key: UnsafeRawBufferPointer, in database: Database) throws {
        guard key.count >= 1, key.count <= maxKeySize else {
            throw LMDBError(
                code: MDB_BAD_VALSIZE,
                message: "a key of \(key.count) bytes in \(database.name); keys must be 1…\(maxKeySize) bytes"
            )
        }
    }
}

// MARK: - MDB_val bridging

extension MDB_val {
    @usableFromInline
    init(_ buffer: UnsafeRawBufferPointer) {
        self.init(mv_size: buffer.count, mv_data: UnsafeMutableRawPointer(mutating: buffer.baseAddress))
    }
}

extension UnsafeRawBufferPointer {
    @usableFromInline
    init(_ value: MDB_val) {
        self.init(start: value.mv_data, count: value.mv_size)
    }
}
