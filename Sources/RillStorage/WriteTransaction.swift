import CLMDB

/// A transaction that writes. Valid inside the closure it was given to, on the writer thread.
package struct WriteTransaction: Transaction {
    final class State {
        /// Set when a write failed for lack of map space: the environment grows the map and replays.
        var hitMapFull = false
        /// Database handles this transaction opened. LMDB keeps a handle private to its transaction until the
        /// transaction commits, and closes it when the transaction aborts: the environment adopts them only after
        /// a commit.
        var openedDatabases: [String: Database] = [:]
    }

    package let pointer: OpaquePointer
    package let maxKeySize: Int
    let state = State()
    /// The environment's handle of a database it has opened already, if any.
    private let knownDatabase: (String) -> Database?

    init(pointer: OpaquePointer, maxKeySize: Int, knownDatabase: @escaping (String) -> Database? = { _ in nil }) {
        self.pointer = pointer
        self.maxKeySize = maxKeySize
        self.knownDatabase = knownDatabase
    }
}

extension WriteTransaction {
    /// Stores `value` under `key`, replacing any value there.
    ///
    /// - Parameter append: the key sorts after every key in the database (`MDB_APPEND`, faster).
    package func put(
        _ value: UnsafeRawBufferPointer,
        for key: UnsafeRawBufferPointer,
        in database: Database,
        append: Bool = false
    ) throws {
        try validate(key: key, in: database)
        var k = MDB_val(key)
        var v = MDB_val(value)
        let rc = mdb_put(pointer, database.handle, &k, &v, append ? UInt32(MDB_APPEND) : 0)
        try record(rc, "mdb_put in \(database.name)")
    }

    /// Stores `value` under `key`, replacing any value there.
    package func put(_ value: [UInt8], for key: [UInt8], in database: Database, append: Bool = false) throws {
        try value.withUnsafeBytes { v in
            try key.withUnsafeBytes { k in try put(v, for: k, in: database, append: append) }
        }
    }

    /// Stores `value` under `key` unless the key exists; then returns the existing value and writes nothing.
    ///
    /// One B-tree descent either way (`MDB_NOOVERWRITE` reports the existing value).
    package func insert(
        _ value: UnsafeRawBufferPointer,
        for key: UnsafeRawBufferPointer,
        in database: Database
    ) throws -> UnsafeRawBufferPointer? {
        try validate(key: key, in: database)
        var k = MDB_val(key)
        var v = MDB_val(value)
        let rc = mdb_put(pointer, database.handle, &k, &v, UInt32(MDB_NOOVERWRITE))
        if rc == MDB_KEYEXIST { return UnsafeRawBufferPointer(v) }
        try record(rc, "mdb_put in \(database.name)")
        return nil
    }

    /// Reserves `count` bytes under `key` and returns them for the caller to fill before the next write.
    package func reserve(
        _ count: Int,
        for key: UnsafeRawBufferPointer,
        in database: Database,
        append: Bool = false
    ) throws -> UnsafeMutableRawBufferPointer {
        try validate(key: key, in: database)
        var k = MDB_val(key)
        var v = MDB_val(mv_size: count, mv_data: nil)
        let flags = UInt32(MDB_RESERVE) | (append ? UInt32(MDB_APPEND) : 0)
        let rc = mdb_put(pointer, database.handle, &k, &v, flags)
        try record(rc, "mdb_put(reserve) in \(database.name)")
        return UnsafeMutableRawBufferPointer(start: v.mv_data, count: count)
    }

    /// Deletes `key`; returns whether it was there.
    @discardableResult
    package func delete(_ key: UnsafeRawBufferPointer, in database: Database) throws -> Bool {
        try validate(key: key, in: database)
        var k = MDB_val(key)
        let rc = mdb_del(pointer, database.handle, &k, nil)
        if rc == MDB_NOTFOUND { return false }
        try record(rc, "mdb_del in \(database.name)")
        return true
    }

    /// Deletes `key`; returns whether it was there.
    @discardableResult
    package func delete(_ key: [UInt8], in database: Database) throws -> Bool {
        try key.withUnsafeBytes { try delete($0, in: database) }
    }

    /// The named database, opened in this transaction, created when `create` is true and it is missing; nil when
    /// it is missing and `create` is false.
    ///
    /// A database created here exists only once the transaction commits, so a transaction that creates
    /// databases and then fails leaves none behind. The handle is valid in this transaction, and after its
    /// commit in every transaction of the environment.
    package func database(named name: String, create: Bool) throws -> Database? {
        precondition(!name.isEmpty, "a database needs a name")
        if let known = knownDatabase(name) ?? state.openedDatabases[name] { return known }
        var handle: MDB_dbi = 0
        // On the writer thread, like every mdb_dbi_open of the environment: never two at once.
        let rc = mdb_dbi_open(pointer, name, create ? UInt32(MDB_CREATE) : 0, &handle)
        if rc == MDB_NOTFOUND, !create { return nil }
        try record(rc, "opening database \(name)")
        let database = Database(handle: handle, name: name)
        state.openedDatabases[name] = database
        return database
    }

    /// Removes every entry of `database`, keeping the database.
    package func removeAll(from database: Database) throws {
        try record(mdb_drop(pointer, database.handle, 0), "mdb_drop \(database.name)")
    }

    private func record(_ rc: Int32, _ context: @autoclosure () -> String) throws {
        if rc == MDB_MAP_FULL { state.hitMapFull = true }
        try check(rc, context())
    }
}
