import Foundation

/// How queries read the store: the candidates of a plan, and the count of index keys.
///
/// Every read of records and index entries that queries make goes through the three functions
/// of the last section (`forEachStoredRecord`, `forEachIndexEntry`, `storedRecord`): the rest
/// is what queries make of them.
extension Store {
    /// Calls `body` with the identifier key and record of each candidate of `plan`, in the plan's
    /// order, inside one read transaction; `body` returns false to stop.
    /// With `transaction`, reads in it instead of a transaction of its own.
    package func forEachCandidate(
        of plan: QueryPlan, in entity: EntityStorage, transaction: StoreSnapshot? = nil,
        _ body: (_ key: UnsafeRawBufferPointer, _ record: UnsafeRawBufferPointer) throws -> Bool
    ) throws {
        func run(_ txn: StoreSnapshot) throws {
            switch plan.access {
            case .scan:
                try Self.forEachStoredRecord(of: entity, in: txn, body)
            case .order(let index):
                var seen: Set<[UInt8]>?
                let range = KeyRange(lower: [0x00], upper: nil)
                if Self.walksInKeyOrder(plan.walk, index) {
                    try walk(index, range, entity: entity, txn: txn, seen: &seen, ordered: true, body)
                } else {
                    try sortedWalk(index, range, plan.walk, entity: entity, txn: txn, body)
                }
            case .ranges(let index, let ranges, _):
                // A sorted plan's ranges share their fixed fields and ascend (a range of dates
                // and the NaN date's): one after the other, from the last for a reverse walk.
                if plan.isSorted, !Self.walksInKeyOrder(plan.walk, index) {
                    for range in plan.walk.reverse ? ranges.reversed() : ranges {
                        guard try sortedWalk(index, range, plan.walk, entity: entity, txn: txn, body) else { return }
                    }
                    return
                }
                var seen: Set<[UInt8]>? = ranges.count > 1 ? [] : nil
                for range in ranges {
                    guard
                        try walk(index, range, entity: entity, txn: txn, seen: &seen, ordered: plan.isSorted, body)
                    else { return }
                }
            case .union(let parts):
                var seen: Set<[UInt8]>? = []
                for part in parts {
                    for range in part.ranges {
                        guard
                            try walk(part.index, range, entity: entity, txn: txn, seen: &seen, ordered: false, body)
                        else { return }
                    }
                }
            }
        }
        if let transaction { try run(transaction) } else { try read(run) }
    }

    /// The number of records `index` lists in `ranges`, read from the index alone.
    /// With `transaction`, reads in it instead of a transaction of its own.
    package func countKeys(
        of index: IndexStorage, in ranges: [KeyRange], transaction: StoreSnapshot? = nil
    ) throws -> Int {
        try countKeys(of: index, in: ranges, upTo: .max, transaction: transaction)
    }

    /// The number of records `index` lists in `ranges`, counting stopped once it reaches `bound`
    /// (the planner's estimates); with nil ranges, the number of the index's keys, from its
    /// statistics. With `transaction`, reads in it instead of a transaction of its own.
    package func countKeys(
        of index: IndexStorage, in ranges: [KeyRange]?, upTo bound: Int, transaction: StoreSnapshot? = nil
    ) throws -> Int {
        func run(_ txn: StoreSnapshot) throws -> Int {
            guard let ranges else { return try txn.entryCount(of: index) }
            var count = 0
            for range in ranges {
                guard count < bound else { break }
                try Self.forEachIndexEntry(of: index, in: range, txn: txn) { _, value in
                    count += try IndexEntry.identifierCount(value: value, index: index.name)
                    return count < bound
                }
            }
            return count
        }
        if let transaction { return try run(transaction) }
        return try read(run)
    }

    /// Walks one key range of an index, handing each record to `body`; false when `body` stopped.
    ///
    /// With `ordered`, records come in the order of their values' whole encodings, then
    /// identifier: entries whose keys agree up to the end of a cut value (long values with a
    /// common prefix, whatever the fields after it hold) are read together and sorted by their
    /// records' values before they are handed on.
    @discardableResult
    private func walk(
        _ index: IndexStorage, _ range: KeyRange, entity: EntityStorage, txn: StoreSnapshot,
        seen: inout Set<[UInt8]>?, ordered: Bool,
        _ body: (_ key: UnsafeRawBufferPointer, _ record: UnsafeRawBufferPointer) throws -> Bool
    ) throws -> Bool {
        func record(_ id: UnsafeRawBufferPointer) throws -> UnsafeRawBufferPointer {
            guard let record = try Self.storedRecord(id, of: entity, in: txn) else {
                throw RillError(
                    .corruptStore, "the index \(entity.name)(\(index.name)) lists a record that does not exist")
            }
            return record
        }
        func emit(_ id: UnsafeRawBufferPointer, _ bytes: UnsafeRawBufferPointer? = nil) throws -> Bool {
            if seen != nil, seen!.insert(Array(id)).inserted == false { return true }
            if let bytes { return try body(id, bytes) }
            return try Self.withRecord(id, of: entity, in: txn, stored: { try record(id) }) { try body(id, $0) }
        }
        // Through a snapshot whose records a live load may know (`knownRecords`), identifiers
        // are handed on in batches, the memory their lookups read asked for a batch at a time
        // (see `SharedRows.prefetch`). The batches start small and double, so that a walk a
        // small limit stops (a live query refilling its window at a commit) reads few keys past
        // its last record. Other walks make no batch.
        let known = seen == nil ? txn.knownRecords : nil
        let pending = known.map { _ in WalkState((ids: IdentifierList(), size: 2)) }
        func handOnPending() throws -> Bool {
            guard let known, let pending, !pending.value.ids.isEmpty else { return true }
            defer {
                pending.value.ids.removeAll()
                pending.value.size = min(pending.value.size * 2, SharedRows.prefetchBatch)
            }
            pending.value.ids.withBuffers { all, ends in known.prefetch(all, ends: ends, in: entity.recordsHandle) }
            return try pending.value.ids.forEach { try emit($0) }
        }
        // Records whose keys tie up to the end of a cut value, waiting to be sorted.
        let tied = WalkState<(prefix: [UInt8], ids: [[UInt8]])?>(nil)
        func flushTied() throws -> Bool {
            guard let group = tied.value else { return true }
            tied.value = nil
            var members: [(order: [UInt8], id: [UInt8], bytes: UnsafeRawBufferPointer)] = []
            for id in group.ids {
                let bytes = try id.withUnsafeBytes { try record($0) }
                let value = try id.withUnsafeBytes {
                    try Self.recordValue(bytes, key: $0, entity: entity.name, fields: index.topLevelFields)
                }
                var order: [UInt8] = []
                for path in index.fieldPaths {
                    try IndexKey.append(QueryEvaluator.read(path, from: value), to: &order)
                }
                members.append((order + id, id, bytes))
            }
            members.sort { OrderKey.precedes($0.order, $1.order) }
            for member in members {
                guard try member.id.withUnsafeBytes({ try emit($0, member.bytes) }) else { return false }
            }
            return true
        }
        let completed = try Self.forEachIndexEntry(of: index, in: range, txn: txn) { key, value in
            let extent = try index.valuesExtent(of: key, entity: entity.name)
            if let pending, value.isEmpty, extent.cutEnd == nil || !ordered, tied.value == nil {
                // One identifier, the key's suffix, handed on with the batch.
                pending.value.ids.append(UnsafeRawBufferPointer(rebasing: key[extent.length...]))
                return try pending.value.ids.count < pending.value.size || handOnPending()
            }
            guard try handOnPending() else { return false }
            if ordered, let cutEnd = extent.cutEnd {
                let ids = try IndexEntry.identifiers(
                    key: key, valuesLength: extent.length, value: value, index: index.name)
                let prefix = Array(key[..<cutEnd])
                if let group = tied.value, group.prefix == prefix {
                    tied.value!.ids += ids
                } else {
                    guard try flushTied() else { return false }
                    tied.value = (prefix, ids)
                }
                return true
            }
            guard try flushTied() else { return false }
            if value.isEmpty {
                // The common case: one identifier, the key's suffix, read in place.
                return try emit(UnsafeRawBufferPointer(rebasing: key[extent.length...]))
            }
            for id in try IndexEntry.list(value, index: index.name) {
                guard try id.withUnsafeBytes({ try emit($0) }) else { return false }
            }
            return true
        }
        return try completed && handOnPending() && flushTied()
    }

    /// Calls `body` with the identifier key and record of each record `index` lists in
    /// `range`, for a plan whose range is exactly its predicate and whose order is the key order,
    /// or with `backward` its reverse, ties (equal values) still in identifier order
    /// (`QueryExecutor.exactRangeModels`); `body` returns false to stop. False when an entry
    /// with a value cut to a prefix is met: such entries are in no particular order among their
    /// ties, and the query is then run through its plan.
    func forEachRecordInExactRange(
        of index: IndexStorage, _ range: KeyRange, backward: Bool = false, entity: EntityStorage,
        txn: StoreSnapshot, _ body: (_ key: UnsafeRawBufferPointer, _ record: UnsafeRawBufferPointer) throws -> Bool
    ) throws -> Bool {
        var ordered = true
        func emit(_ id: UnsafeRawBufferPointer) throws -> Bool {
            guard let record = try Self.storedRecord(id, of: entity, in: txn) else {
                throw RillError(
                    .corruptStore, "the index \(entity.name)(\(index.name)) lists a record that does not exist")
            }
            return try body(id, record)
        }
        // The records of one entry: the key's suffix, or those its value lists.
        func emit(key: UnsafeRawBufferPointer, value: UnsafeRawBufferPointer, valuesLength: Int) throws -> Bool {
            // The common case: one identifier, the key's suffix, read in place.
            if value.isEmpty { return try emit(UnsafeRawBufferPointer(rebasing: key[valuesLength...])) }
            for id in try IndexEntry.list(value, index: index.name) {
                guard try id.withUnsafeBytes(emit) else { return false }
            }
            return true
        }
        guard backward else {
            try Self.forEachIndexEntry(of: index, in: range, txn: txn) { key, value in
                let extent = try index.valuesExtent(of: key, entity: entity.name)
                guard extent.cutEnd == nil else {
                    ordered = false
                    return false
                }
                return try emit(key: key, value: value, valuesLength: extent.length)
            }
            return ordered
        }
        // Backward, the entries of equal values come in reverse identifier order: each run of
        // them is gathered (the keys and values stay where the snapshot has them) and handed on
        // from its first. Only one run is held, so a read a limit stops reads one run past it.
        // Shared by the closure and `flush` without a dynamic exclusivity check for each entry.
        let run = WalkState(
            (entries: [(key: UnsafeRawBufferPointer, value: UnsafeRawBufferPointer)](), valuesLength: 0))
        func flush() throws -> Bool {
            defer { run.value.entries.removeAll(keepingCapacity: true) }
            let valuesLength = run.value.valuesLength
            for entry in run.value.entries.reversed() {
                guard try emit(key: entry.key, value: entry.value, valuesLength: valuesLength) else { return false }
            }
            return true
        }
        let completed = try Self.forEachIndexEntry(of: index, in: range, backward: true, txn: txn) { key, value in
            let extent = try index.valuesExtent(of: key, entity: entity.name)
            guard extent.cutEnd == nil else {
                ordered = false
                return false
            }
            if let last = run.value.entries.last?.key,
                extent.length != run.value.valuesLength
                    || memcmp(key.baseAddress!, last.baseAddress!, extent.length) != 0
            {
                guard try flush() else { return false }
            }
            run.value.valuesLength = extent.length
            run.value.entries.append((key, value))
            return true
        }
        if completed, ordered { _ = try flush() }
        return ordered
    }

    // MARK: - Reading the storage
    //
    // Inlined into their callers, so that a walk's work for each entry is the body of the
    // cursor's loop, as if written there.

    /// Calls `body` with the identifier key and bytes of each record of `entity`, in identifier
    /// order; `body` returns false to stop. False when it stopped.
    @discardableResult
    @inline(__always)
    static func forEachStoredRecord(
        of entity: EntityStorage, in txn: StoreSnapshot,
        _ body: (_ key: UnsafeRawBufferPointer, _ record: UnsafeRawBufferPointer) throws -> Bool
    ) throws -> Bool {
        try txn.forEachRecord(of: entity, body)
    }

    /// Calls `body` with the key and value of each entry of `index` in `range`, in key order
    /// (with `backward`, the reverse); `body` returns false to stop. False when it stopped.
    @discardableResult
    @inline(__always)
    static func forEachIndexEntry(
        of index: IndexStorage, in range: KeyRange, backward: Bool = false, txn: StoreSnapshot,
        _ body: (_ key: UnsafeRawBufferPointer, _ value: UnsafeRawBufferPointer) throws -> Bool
    ) throws -> Bool {
        if backward { return try txn.forEachEntryBackwards(of: index, from: range.lower, before: range.upper, body) }
        return try txn.forEachEntry(of: index, from: range.lower, before: range.upper, body)
    }

    /// The bytes of the record of `entity` whose identifier key is `id`, or nil.
    /// Calls `body` with the bytes of record `id` of `entity` that an index walk listed: those a
    /// live query's load knows at this snapshot (`StoreSnapshot.knownRecords`), else `stored()`.
    @inline(__always)
    static func withRecord<R>(
        _ id: UnsafeRawBufferPointer, of entity: EntityStorage, in txn: StoreSnapshot,
        stored: () throws -> UnsafeRawBufferPointer, _ body: (UnsafeRawBufferPointer) throws -> R
    ) throws -> R {
        if let known = txn.knownRecords?.bytes(of: id, in: entity.recordsHandle) {
            return try known.withUnsafeBytes(body)
        }
        return try body(try stored())
    }

    static func storedRecord(
        _ id: UnsafeRawBufferPointer, of entity: EntityStorage, in txn: StoreSnapshot
    ) throws -> UnsafeRawBufferPointer? {
        try txn.record(of: entity, key: id)
    }
}
