import CLMDB
import Foundation
import Rill

/// The indexed queries done through LMDB's C API on a copy of Rill's store: what each query costs
/// the storage, its limit. For each argument, in a read transaction of its own (as each fetch has),
/// a cursor on the index finds the argument's first key and walks the keys the query takes, and
/// each record is read by the identifier key that ends its index key. Nothing is decoded.
///
/// The index keys each argument starts from are made beforehand (`probes`), with Rill's own key
/// encoding, so the measure holds no encoding of values either.
struct RawIndexedGets {
    /// Where a query's walk of the index starts and how it goes on.
    struct Probe {
        /// The encoded value: the walk starts at the first key at or after `start`.
        var start: [UInt8]
        var walk: Walk
    }

    enum Walk {
        /// Every key that starts with `start` (an equality).
        case prefix
        /// At most `limit` keys from `start` on, in key order (a lower bound).
        case forward(limit: Int)
        /// At most `limit` keys before `start`, from the last down (an upper bound, descending).
        case backward(limit: Int)
    }

    private let raw: RawLMDB
    private let index: MDB_dbi
    private let records: MDB_dbi
    /// Bytes of the identifier key that ends every index key.
    private static let idLength = 9

    /// The walks of the index of `entity` on `field` alone.
    init(raw: RawLMDB, entity: String, field: String) {
        let indexName = "index:\(entity):\(field)"
        let recordsName = "records:\(entity)"
        self.raw = raw
        raw.open([indexName, recordsName])
        index = raw.databases[indexName]!
        records = raw.databases[recordsName]!
    }

    /// The walk of an equality on `value`.
    static func equal(to value: RecordValue) -> Probe {
        Probe(start: encoded(value), walk: .prefix)
    }

    /// The walk of `field > value` sorted by the field, `limit` rows.
    static func above(_ value: RecordValue, limit: Int) -> Probe {
        // The first key past every key of `value` itself.
        Probe(start: IndexKey.successor(ofPrefix: encoded(value))!, walk: .forward(limit: limit))
    }

    /// The walk of `field < value` sorted by the field descending, `limit` rows.
    static func below(_ value: RecordValue, limit: Int) -> Probe {
        Probe(start: encoded(value), walk: .backward(limit: limit))
    }

    private static func encoded(_ value: RecordValue) -> [UInt8] {
        var key: [UInt8] = []
        try! IndexKey.append(value, to: &key)
        return key
    }

    /// The rows of the query `probe` stands for: the records its walk of the index reads.
    func rows(of probe: Probe) -> Int {
        var txn: OpaquePointer?
        precondition(mdb_txn_begin(raw.env, nil, UInt32(MDB_RDONLY), &txn) == 0)
        defer { mdb_txn_abort(txn) }
        var cursor: OpaquePointer?
        precondition(mdb_cursor_open(txn, index, &cursor) == 0)
        defer { mdb_cursor_close(cursor) }
        return probe.start.withUnsafeBytes { start -> Int in
            var key = MDB_val(mv_size: start.count, mv_data: UnsafeMutableRawPointer(mutating: start.baseAddress))
            var empty = MDB_val()
            var found = mdb_cursor_get(cursor, &key, &empty, MDB_SET_RANGE) == 0
            let limit: Int
            let step: MDB_cursor_op
            switch probe.walk {
            case .prefix:
                limit = .max
                step = MDB_NEXT
            case .forward(let count):
                limit = count
                step = MDB_NEXT
            case .backward(let count):
                limit = count
                step = MDB_PREV
                // The last key before `start`: the one before the first at or after it, or the
                // last of all.
                found = mdb_cursor_get(cursor, &key, &empty, found ? MDB_PREV : MDB_LAST) == 0
            }
            var rows = 0
            while found, rows < limit {
                if case .prefix = probe.walk {
                    guard key.mv_size == start.count + Self.idLength,
                        memcmp(key.mv_data, start.baseAddress!, start.count) == 0
                    else { break }
                }
                var id = MDB_val(mv_size: Self.idLength, mv_data: key.mv_data + (key.mv_size - Self.idLength))
                var record = MDB_val()
                guard mdb_get(txn, records, &id, &record) == 0 else { break }
                // A record's value lies in its leaf node, beside the key the get compared.
                if record.mv_size > 0 { rows += 1 }
                found = mdb_cursor_get(cursor, &key, &empty, step) == 0
            }
            return rows
        }
    }
}
