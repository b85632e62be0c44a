import CLMDB
import Foundation

/// LMDB through its C API with no Rill in between: the baseline of the save benchmark, and of
/// the history benchmark's replay (a walk of a copy of the log).
final class RawLMDB {
    let env: OpaquePointer
    private(set) var databases: [String: MDB_dbi] = [:]

    init(directory: String, mapSize: Int) {
        var env: OpaquePointer?
        try! FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        mdb_env_create(&env)
        mdb_env_set_maxdbs(env, 1024)
        mdb_env_set_maxreaders(env, 510)
        mdb_env_set_mapsize(env, mapSize)
        let rc = mdb_env_open(env, directory, UInt32(MDB_NOTLS), 0o600)
        precondition(rc == 0, String(cString: mdb_strerror(rc)))
        self.env = env!
    }

    deinit { mdb_env_close(env) }

    /// Opens (creating) the named databases in one transaction.
    func open(_ names: [String]) {
        var txn: OpaquePointer?
        mdb_txn_begin(env, nil, 0, &txn)
        for name in names {
            var dbi: MDB_dbi = 0
            precondition(mdb_dbi_open(txn, name, UInt32(MDB_CREATE), &dbi) == 0)
            databases[name] = dbi
        }
        precondition(mdb_txn_commit(txn) == 0)
    }

    /// Calls `body` with every key and value of the existing database `name`, in key order, in
    /// one read transaction: a cursor walk through the C API, each value left where LMDB maps it.
    func forEach(
        in name: String, _ body: (_ key: UnsafeRawBufferPointer, _ value: UnsafeRawBufferPointer) throws -> Void
    ) rethrows {
        var txn: OpaquePointer?
        precondition(mdb_txn_begin(env, nil, UInt32(MDB_RDONLY), &txn) == 0)
        defer { mdb_txn_abort(txn) }
        var dbi: MDB_dbi = 0
        let rc = mdb_dbi_open(txn, name, 0, &dbi)
        precondition(rc == 0, String(cString: mdb_strerror(rc)))
        var cursor: OpaquePointer?
        precondition(mdb_cursor_open(txn, dbi, &cursor) == 0)
        defer { mdb_cursor_close(cursor) }
        var key = MDB_val()
        var value = MDB_val()
        var operation = MDB_FIRST
        while mdb_cursor_get(cursor, &key, &value, operation) == 0 {
            try body(
                UnsafeRawBufferPointer(start: key.mv_data, count: key.mv_size),
                UnsafeRawBufferPointer(start: value.mv_data, count: value.mv_size))
            operation = MDB_NEXT
        }
    }

    /// One write transaction doing `writes`, committed.
    func commit(_ writes: [CapturedWrite]) {
        var txn: OpaquePointer?
        precondition(mdb_txn_begin(env, nil, 0, &txn) == 0)
        for write in writes {
            write.key.withUnsafeBytes { key in
                write.value.withUnsafeBytes { value in
                    var k = MDB_val(mv_size: key.count, mv_data: UnsafeMutableRawPointer(mutating: key.baseAddress))
                    var v = MDB_val(mv_size: value.count, mv_data: UnsafeMutableRawPointer(mutating: value.baseAddress))
                    let rc = mdb_put(txn, databases[write.database]!, &k, &v, write.flags)
                    precondition(rc == 0, String(cString: mdb_strerror(rc)))
                }
            }
        }
        let rc = mdb_txn_commit(txn)
        precondition(rc == 0, String(cString: mdb_strerror(rc)))
    }
}
