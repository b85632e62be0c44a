import CLMDB
import Foundation

/// The one-row indexed query done through LMDB's C API on a copy of Rill's store: what the query
/// costs the storage, its limit. For each value, in a read transaction of its own (as each fetch
/// has), a cursor finds the first key of the index with the value's prefix, and the record is read
/// by the identifier key that ends it. Nothing is decoded.
///
/// The index keys' prefixes (the value's encoding, without the 9-byte identifier key that ends each
/// key) are read from the copy beforehand, so the measure holds no encoding of values either.
struct RawIndexedGets {
    private let raw: RawLMDB
    private let index: MDB_dbi
    private let records: MDB_dbi
    /// The key prefix of value `v`: `prefixes[prefixEnds[v - 1]..<prefixEnds[v]]` (from 0 for the first).
    private var prefixes: [UInt8] = []
    private var prefixEnds: [Int] = []

    /// Reads the prefixes of the unique integer index `indexName`, whose values are 0 to `count - 1`,
    /// and whose keys, in key order, are those values in order (integers encode in order).
    init(raw: RawLMDB, index indexName: String, records recordsName: String, count: Int) {
        self.raw = raw
        raw.open([indexName, recordsName])
        index = raw.databases[indexName]!
        records = raw.databases[recordsName]!
        var prefixes: [UInt8] = []
        var ends: [Int] = []
        raw.forEach(in: indexName) { key, _ in
            prefixes.append(contentsOf: key[..<(key.count - 9)])
            ends.append(prefixes.count)
        }
        precondition(ends.count == count, "\(indexName) holds \(ends.count) keys, not \(count)")
        self.prefixes = prefixes
        prefixEnds = ends
    }

    /// The rows (0 or 1) of the record whose indexed value is `value`.
    func rows(of value: Int) -> Int {
        var txn: OpaquePointer?
        precondition(mdb_txn_begin(raw.env, nil, UInt32(MDB_RDONLY), &txn) == 0)
        defer { mdb_txn_abort(txn) }
        var cursor: OpaquePointer?
        precondition(mdb_cursor_open(txn, index, &cursor) == 0)
        defer { mdb_cursor_close(cursor) }
        let start = value == 0 ? 0 : prefixEnds[value - 1]
        return prefixes.withUnsafeBytes { all -> Int in
            let prefix = UnsafeRawBufferPointer(rebasing: all[start..<prefixEnds[value]])
            var key = MDB_val(mv_size: prefix.count, mv_data: UnsafeMutableRawPointer(mutating: prefix.baseAddress))
            var empty = MDB_val()
            guard mdb_cursor_get(cursor, &key, &empty, MDB_SET_RANGE) == 0, key.mv_size == prefix.count + 9,
                memcmp(key.mv_data, prefix.baseAddress!, prefix.count) == 0
            else { return 0 }
            var id = MDB_val(mv_size: 9, mv_data: key.mv_data + prefix.count)
            var record = MDB_val()
            guard mdb_get(txn, records, &id, &record) == 0 else { return 0 }
            // Touch the record's bytes, as a reader would.
            return record.mv_size > 0 ? 1 : 0
        }
    }
}
