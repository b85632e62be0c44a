import CPrefetch
import Foundation
import RillLocks

/// One copy of a record's row for all the live queries of a store that hold it.
///
/// A row is a function of the record's stored bytes and of what makes rows of them: the model
/// type that decodes them and the sort paths of the order key (a ``Variant``). Rows of equal
/// bytes and variant are interchangeable, so a query that reads a record another query holds
/// takes that query's row instead of decoding the record again, whatever snapshot either read:
/// the stored bytes are compared, so sharing is exact.
///
/// The table keeps, for each record key, the last bytes it was given and the rows made of them,
/// with the snapshot those bytes were read at when a load read them (`Known`): a later load at
/// the same snapshot takes them from here instead of reading the record again. Its reference
/// keeps rows alive; a sweep drops the rows nothing else holds any more. Sweeps
/// are due once the rows added since the last one, or the rows queries let go of, reach half the
/// table (amortized constant time a row), and run at the follower's next step.
final class SharedRows: Sendable {
    /// What rows of a model type with an order are made of: numbers given once per process.
    struct Variant: Hashable, Sendable {
        /// The entity's number: records of two entities with the same key are told apart.
        var entity: Int32
        /// The model type's and the sort's number.
        var maker: Int32
        /// The model type's number: rows of two variants of one model type hold equal models
        /// when made of equal bytes, whatever their sorts.
        var model: Int32
    }

    private struct Registry {
        var entities: [String: Int32] = [:]
        var makers: [Maker: Int32] = [:]
        var models: [ObjectIdentifier: Int32] = [:]
    }

    private struct Maker: Hashable {
        var model: ObjectIdentifier
        var orderPaths: [QuerySortKey]?
    }

    private static let registry = Lock(Registry())

    /// The variant of rows of `model` records ordered by `orderPaths` (nil: rows without order keys).
    static func variant(entity: String, model: Any.Type, orderPaths: [QuerySortKey]?) -> Variant {
        registry.withLock { registry in
            let entityNumber = registry.entities[entity] ?? Int32(registry.entities.count)
            registry.entities[entity] = entityNumber
            let maker = Maker(model: ObjectIdentifier(model), orderPaths: orderPaths)
            let makerNumber = registry.makers[maker] ?? Int32(registry.makers.count)
            registry.makers[maker] = makerNumber
            let modelNumber = registry.models[maker.model] ?? Int32(registry.models.count)
            registry.models[maker.model] = modelNumber
            return Variant(entity: entityNumber, maker: makerNumber, model: modelNumber)
        }
    }

    private struct State {
        /// Each entity's records, by its number.
        var records: [KeyedObjects<Entry>] = []
        var added = 0
        var reused = 0
        var released = 0
        var keptBySweep = 0
        /// The entry `Known` found last, and its entity's number: the row of that record is
        /// usually asked for next, by the load that read it. Unretained: its table holds it, and
        /// an entry leaves its table only in a sweep, which forgets it.
        var lastKnown: (entity: Int32, entry: Unmanaged<Entry>)?
        var isDue: Bool {
            let bound = max(Self.minimumSweep, keptBySweep / 2)
            return added >= bound || released >= bound
        }
        static let minimumSweep = 4_096

        /// The table of the entity numbered `entity`, made when missing.
        mutating func table(_ entity: Int32) -> KeyedObjects<Entry> {
            let index = Int(entity)
            while records.count <= index { records.append(KeyedObjects()) }
            return records[index]
        }
    }

    /// A class, so that a sweep reaches each row in place (to ask whether it is the only owner).
    ///
    /// Its fields are read and written only under the table's lock, in accesses that never
    /// overlap: dynamic exclusivity checks on them would cost more than the accesses (each row of
    /// a load reads them).
    private final class Entry: KeyedObject {
        let key: [UInt8]
        /// The record's bytes; set only with `readAt`.
        @exclusivity(unchecked) var bytes: [UInt8]
        /// The snapshot (LMDB transaction) whose record `key` is `bytes`; 0 when none is known
        /// (bytes of a commit's change).
        @exclusivity(unchecked) var readAt: UInt64
        @exclusivity(unchecked) var rows: [(maker: Int32, model: Int32, row: LiveEntry)]

        /// The key in two words when it is short: a search compares them, not the key's array.
        let inlineKey: InlineKey

        init(key: [UInt8], bytes: [UInt8], readAt: UInt64, rows: [(maker: Int32, model: Int32, row: LiveEntry)]) {
            self.key = key
            inlineKey = InlineKey(key)
            self.bytes = bytes
            self.readAt = readAt
            self.rows = rows
        }

        var tableKey: [UInt8] { key }

        @inline(__always)
        func hasTableKey(_ key: UnsafeRawBufferPointer) -> Bool {
            guard inlineKey.isHeld else { return self.key.withUnsafeBytes { sameBytes($0, key) } }
            return InlineKey(key) == inlineKey
        }
    }

    private let state = Lock(State())

    init() {}

    /// How many records have shared rows (for tests and benchmarks).
    var recordCount: Int { state.withLock { $0.records.reduce(0) { $0 + $1.count } } }

    /// How many rows were taken from the table rather than made, since the last sweep.
    var reusedCount: Int { state.withLock { $0.reused } }

    /// The records of one entity as one snapshot has them, as far as the table knows them: what a
    /// load reads through (`StoreSnapshot.knownRecords`) before it reads the store.
    ///
    /// A snapshot is an LMDB read transaction's ID, which names one state of the file: bytes read
    /// at it are the record at it for as long as the process has the file open. A snapshot of
    /// 0 knows nothing.
    struct Known {
        let table: SharedRows
        let entity: Int32
        /// The handle of the entity's database of records: a walk of another entity's records
        /// (a relationship's) through the same snapshot knows none of them.
        let records: UInt32
        let snapshot: UInt64

        /// Asks for the memory that looking up the records `ids` (one after another in one
        /// buffer, each ending at its offset in `ends`) of the database with handle `records`
        /// will read, and taking their rows: a hint (see `SharedRows.prefetch`).
        @inline(__always)
        func prefetch(_ ids: UnsafeRawBufferPointer, ends: UnsafeBufferPointer<Int>, in records: UInt32) {
            guard snapshot != 0, records == self.records else { return }
            table.prefetch(ids, ends: ends, entity: entity)
        }

        /// The bytes of record `key` of the database of records with handle `records` at the
        /// snapshot, when the table has them.
        @inline(__always)
        func bytes(of key: UnsafeRawBufferPointer, in records: UInt32) -> [UInt8]? {
            guard snapshot != 0, records == self.records else { return nil }
            return table.bytes(of: key, entity: entity, readAt: snapshot)
        }
    }

    /// What the table knows at `snapshot` of the records of `entity`, stored in the database
    /// with handle `records`.
    func known(entity: Int32, records: UInt32, at snapshot: UInt64) -> Known {
        Known(table: self, entity: entity, records: records, snapshot: snapshot)
    }

    /// The most keys `prefetch` takes at once.
    static let prefetchBatch = 16

    /// Asks for the memory that looking up the records `ids` (at most `prefetchBatch`, one after
    /// another in one buffer, each ending at its offset in `ends`) and taking their rows will
    /// read: each key's slot, its entry, the entry's bytes and its list of rows, and the rows.
    ///
    /// A load looks up the records it reads one by one, and each lookup follows a chain of
    /// references through memory written long before (the table's slot, the entry, its lists,
    /// a row): a cache miss at each step, each waiting for the one before. Asked for a batch of
    /// keys at a time, one step for all of them before the next, the misses of a batch overlap.
    func prefetch(_ ids: UnsafeRawBufferPointer, ends: UnsafeBufferPointer<Int>, entity: Int32) {
        let count = min(ends.count, Self.prefetchBatch)
        guard count > 1 else { return }
        state.withLock { state in
            let index = Int(entity)
            guard index < state.records.count else { return }
            let table = state.records[index]
            guard !table.isEmpty else { return }
            func id(_ position: Int) -> UnsafeRawBufferPointer {
                IdentifierList.identifier(position, in: ids, ends: ends)
            }
            withUnsafeTemporaryAllocation(of: Int.self, capacity: count) { hashes in
                for position in 0..<count { hashes[position] = table.prefetchSlot(of: id(position)) }
                for position in 0..<count { table.prefetchObject(hash: hashes[position]) }
            }
            // The entries, unretained (a retain writes to the object) while the lock is held.
            withUnsafeTemporaryAllocation(of: Unmanaged<Entry>?.self, capacity: count) { entries in
                for position in 0..<count {
                    entries[position] = table.unretainedObject(for: id(position))
                    // The lists' storage, read from their arrays without touching them.
                    entries[position]?._withUnsafeGuaranteedRef { entry in
                        withUnsafeBytes(of: entry.bytes) { rill_prefetch($0.load(as: UnsafeRawPointer.self)) }
                        withUnsafeBytes(of: entry.rows) { rill_prefetch($0.load(as: UnsafeRawPointer.self)) }
                    }
                }
                for position in 0..<count {
                    entries[position]?._withUnsafeGuaranteedRef { entry in
                        entry.rows.withUnsafeBufferPointer { rows in
                            for row in rows.indices {
                                // The row's address, read without retaining (writing to) the row.
                                withUnsafeBytes(of: rows[row].row) {
                                    rill_prefetch($0.load(as: UnsafeRawPointer.self))
                                }
                            }
                        }
                    }
                }
            }
        }
    }

    /// The entries are read unretained, here and in `row`, while the lock is held (their table
    /// holds them): a retain and a release write to the entry, whose memory a load's lookup of a
    /// record otherwise only reads, and most of it is not in the cache (a miss for each record).
    private func bytes(of key: UnsafeRawBufferPointer, entity: Int32, readAt snapshot: UInt64) -> [UInt8]? {
        state.withLock { state in
            let index = Int(entity)
            guard index < state.records.count, let entry = state.records[index].unretainedObject(for: key) else {
                return nil
            }
            return entry._withUnsafeGuaranteedRef { found -> [UInt8]? in
                guard found.readAt == snapshot else { return nil }
                state.lastKnown = (entity, entry)
                return found.bytes
            }
        }
    }

    /// The row of the record `key` stored as `bytes`, as `variant` makes it: a shared one, or the
    /// one `make` makes, shared from now on. `make` is given the key as an array and, when the
    /// table has one, a row of the same bytes made by another variant of the same model type:
    /// its model is the one decoding the bytes would give, only the order key differs.
    /// `snapshot` is the snapshot the bytes were read at, or 0 when they were not read from one
    /// (a commit's change).
    func row(
        key: UnsafeRawBufferPointer, bytes: UnsafeRawBufferPointer, variant: Variant, snapshot: UInt64 = 0,
        make: (_ key: [UInt8], _ sameModel: LiveEntry?) throws -> LiveEntry
    ) rethrows -> LiveEntry {
        let found = state.withLock { state -> (row: LiveEntry?, key: [UInt8]?, sameModel: LiveEntry?) in
            let unretained: Unmanaged<Entry>
            if let last = state.lastKnown, last.entity == variant.entity,
                last.entry._withUnsafeGuaranteedRef({ $0.hasTableKey(key) })
            {
                unretained = last.entry
            } else {
                guard let found = state.table(variant.entity).unretainedObject(for: key) else { return (nil, nil, nil) }
                unretained = found
            }
            return unretained._withUnsafeGuaranteedRef { entry in
                // The key's array is taken only for a row to make: a shared row has it already.
                guard entry.bytes.withUnsafeBytes({ sameBytes($0, bytes) }) else { return (nil, entry.key, nil) }
                // The same bytes, so the record at this snapshot too.
                if snapshot != 0 { entry.readAt = snapshot }
                // The rows read where they are: a copy of each would retain it, a write to a row
                // not otherwise touched. Only the row returned is retained.
                return entry.rows.withUnsafeBufferPointer { rows in
                    var sameModel: Int?
                    for index in rows.indices {
                        if rows[index].maker == variant.maker {
                            state.reused += 1
                            return (rows[index].row, nil, nil)
                        }
                        if rows[index].model == variant.model { sameModel = index }
                    }
                    return (nil, entry.key, sameModel.map { rows[$0].row })
                }
            }
        }
        if let row = found.row { return row }
        // Made outside the lock: decoding may take a while, and other threads share the table.
        let made = try make(found.key ?? Array(key), found.sameModel)
        return state.withLock { state -> LiveEntry in
            state.added += 1
            let table = state.table(variant.entity)
            guard let entry = table.object(for: made.key) else {
                table.insert(
                    Entry(
                        key: made.key, bytes: Array(bytes), readAt: snapshot,
                        rows: [(variant.maker, variant.model, made)]))
                return made
            }
            if entry.bytes.withUnsafeBytes({ sameBytes($0, bytes) }) {
                if snapshot != 0 { entry.readAt = snapshot }
                // Another thread may have shared one meanwhile: there is one row a variant.
                if let other = entry.rows.first(where: { $0.maker == variant.maker }) { return other.row }
                entry.rows.append((variant.maker, variant.model, made))
            } else {
                // Other bytes: the record changed (or an older snapshot was read); the rows of
                // the bytes before are no longer shared.
                entry.bytes = Array(bytes)
                entry.readAt = snapshot
                entry.rows = [(variant.maker, variant.model, made)]
            }
            return made
        }
    }

    /// Notes that a query let go of `count` rows, which a sweep may then free.
    func noteReleased(_ count: Int) {
        guard count > 0 else { return }
        state.withLock { $0.released += count }
    }

    /// Drops the rows no query holds any more, when enough rows came or went since the last time.
    func sweepIfDue() {
        state.withLock { state in
            guard state.isDue else { return }
            Self.sweep(&state)
        }
    }

    /// Drops the rows no query holds any more.
    func sweep() {
        state.withLock { Self.sweep(&$0) }
    }

    private static func sweep(_ state: inout State) {
        state.lastKnown = nil
        var kept = 0
        for table in state.records {
            table.removeAll { entry in
                var position = 0
                while position < entry.rows.count {
                    if isKnownUniquelyReferenced(&entry.rows[position].row) {
                        entry.rows.swapAt(position, entry.rows.count - 1)
                        entry.rows.removeLast()
                    } else {
                        position += 1
                    }
                }
                return entry.rows.isEmpty
            }
            kept += table.count
        }
        state.added = 0
        state.reused = 0
        state.released = 0
        state.keptBySweep = kept
    }
}
