import CLMDB
import Foundation

/// The puts of Rill's load of the query benchmark's records, byte for byte, to replay through raw
/// LMDB: each record (`MDB_NOOVERWRITE`, as Rill inserts), then its key in each index (empty
/// values), record after record in the order Rill met them, then the log entry (`MDB_APPEND`).
///
/// They are read back from an exact copy of the store after the load: one save of new records
/// writes exactly what the store then holds. Left out are the few keys of `meta` the commit also
/// writes (the log's flush mark), a handful of puts against millions.
struct CapturedLoad {
    /// One database's entries, flat: entry `i` is `keys[keyEnds[i - 1]..<keyEnds[i]]` (from 0 for
    /// the first), and its value likewise.
    struct Puts {
        var database: String
        var flags: UInt32
        var keys: [UInt8] = []
        var keyEnds: [Int] = []
        var values: [UInt8] = []
        var valueEnds: [Int] = []

        var count: Int { keyEnds.count }
        var bytes: Int { keys.count + values.count }

        mutating func append(key: UnsafeRawBufferPointer, value: UnsafeRawBufferPointer) {
            keys.append(contentsOf: key)
            keyEnds.append(keys.count)
            values.append(contentsOf: value)
            valueEnds.append(values.count)
        }
    }

    private(set) var records: Puts
    private(set) var indexes: [Puts]
    private(set) var log: Puts

    /// Reads the puts of `count` records of `entity`, with ids 0 to `count - 1` (the benchmark's),
    /// and of the named indexes, from `raw`, a copy of the store Rill loaded.
    init(from raw: RawLMDB, entity: String, indexes names: [String], count: Int) {
        var records = Puts(database: "records:" + entity, flags: UInt32(MDB_NOOVERWRITE))
        var log = Puts(database: "log", flags: UInt32(MDB_APPEND))
        // Identifier keys of integers sort like the integers: the records come in id order,
        // which is the order of the load.
        raw.forEach(in: records.database) { key, value in records.append(key: key, value: value) }
        precondition(records.count == count, "\(records.database) holds \(records.count) records, not \(count)")
        raw.forEach(in: log.database) { key, value in log.append(key: key, value: value) }
        self.records = records
        self.log = log
        indexes = names.map { Self.indexPuts(database: "index:\(entity):\($0)", from: raw, count: count) }
    }

    /// The entries of one index, put in the order of the records they point to. Each key ends
    /// with the record's identifier key (`0x01`, then the id big-endian with its sign bit
    /// flipped), which gives the record's place in the load.
    private static func indexPuts(database: String, from raw: RawLMDB, count: Int) -> Puts {
        func position(of key: UnsafeRawBufferPointer) -> Int {
            precondition(key.count > 9 && key[key.count - 9] == 0x01, "\(database): a key without an integer id")
            var bits: UInt64 = 0
            for byte in key[(key.count - 8)...] { bits = bits << 8 | UInt64(byte) }
            let id = Int(Int64(bitPattern: bits ^ (1 << 63)))
            precondition((0..<count).contains(id), "\(database): id \(id) is not one the load made")
            return id
        }
        // Two walks: the sizes of the keys by record, then the keys into their places.
        var sizes = [Int](repeating: -1, count: count)
        raw.forEach(in: database) { key, value in
            precondition(value.isEmpty, "\(database): an entry lists identifiers, which short keys never do")
            let place = position(of: key)
            precondition(sizes[place] < 0, "\(database): two keys of one record")
            sizes[place] = key.count
        }
        precondition(!sizes.contains(-1), "\(database): a record without a key")
        var end = 0
        let keyEnds = sizes.map { size in
            end += size
            return end
        }
        var keys = [UInt8](repeating: 0, count: end)
        keys.withUnsafeMutableBytes { keys in
            raw.forEach(in: database) { key, _ in
                let place = position(of: key)
                let start = place == 0 ? 0 : keyEnds[place - 1]
                keys.baseAddress!.advanced(by: start).copyMemory(from: key.baseAddress!, byteCount: key.count)
            }
        }
        var puts = Puts(database: database, flags: 0)
        puts.keys = keys
        puts.keyEnds = keyEnds
        puts.valueEnds = [Int](repeating: 0, count: count)
        return puts
    }

    // MARK: - Facts

    var putCount: Int { records.count + indexes.map(\.count).reduce(0, +) + log.count }
    var byteCount: Int { records.bytes + indexes.map(\.bytes).reduce(0, +) + log.bytes }

    // MARK: - Replaying

    /// Makes every put in one write transaction of `raw` (whose databases must be open) and commits it.
    func replay(into raw: RawLMDB) {
        var txn: OpaquePointer?
        precondition(mdb_txn_begin(raw.env, nil, 0, &txn) == 0)
        let recordsDatabase = raw.databases[records.database]!
        let indexDatabases = indexes.map { raw.databases[$0.database]! }
        for index in 0..<records.count {
            Self.put(index, of: records, into: recordsDatabase, txn: txn)
            for (puts, database) in zip(indexes, indexDatabases) {
                Self.put(index, of: puts, into: database, txn: txn)
            }
        }
        let logDatabase = raw.databases[log.database]!
        for index in 0..<log.count { Self.put(index, of: log, into: logDatabase, txn: txn) }
        let rc = mdb_txn_commit(txn)
        precondition(rc == 0, String(cString: mdb_strerror(rc)))
    }

    private static func put(_ index: Int, of puts: Puts, into database: MDB_dbi, txn: OpaquePointer?) {
        let keyStart = index == 0 ? 0 : puts.keyEnds[index - 1]
        let valueStart = index == 0 ? 0 : puts.valueEnds[index - 1]
        puts.keys.withUnsafeBytes { keys in
            puts.values.withUnsafeBytes { values in
                var key = MDB_val(
                    mv_size: puts.keyEnds[index] - keyStart,
                    mv_data: UnsafeMutableRawPointer(mutating: keys.baseAddress! + keyStart))
                // An index's values are empty: any address will do for a size of 0.
                var value = MDB_val(
                    mv_size: puts.valueEnds[index] - valueStart,
                    mv_data: UnsafeMutableRawPointer(mutating: (values.baseAddress ?? keys.baseAddress!) + valueStart))
                let rc = mdb_put(txn, database, &key, &value, puts.flags)
                precondition(rc == 0, "mdb_put in \(puts.database): \(String(cString: mdb_strerror(rc)))")
            }
        }
    }
}
