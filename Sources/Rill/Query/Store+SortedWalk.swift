import Foundation

/// The index walks that give a sort's order other than the forward key order: backwards for a
/// descending sort, and over fewer fields than the index has for a sort that is a prefix of it.
extension Store {
    /// Whether a sorted walk of `index` is its forward key order, ties by identifier: forward,
    /// over every field (the identifier key follows them in the key).
    static func walksInKeyOrder(_ walk: QueryPlan.Walk, _ index: IndexStorage) -> Bool {
        !walk.reverse && (walk.fields ?? index.fieldPaths.count) >= index.fieldPaths.count
    }

    /// How an exact range is read for `walk` (`forEachRecordInExactRange`): false forward (the
    /// key order), true backward (a walk over every field of the index, reversed); nil for a walk
    /// over fewer fields, whose ties need sorting.
    static func exactRangeDirection(_ walk: QueryPlan.Walk, _ index: IndexStorage) -> Bool? {
        (walk.fields ?? index.fieldPaths.count) >= index.fieldPaths.count ? walk.reverse : nil
    }

    /// Walks one key range of `index` in the order `order` describes, handing each record to
    /// `body`; false when `body` stopped.
    ///
    /// The keys are read forward, or from the last for a reverse walk, and gathered in runs that
    /// agree on the order's fields. A run ends where a key differs within those fields, so the
    /// runs come in the order of those fields' values (reversed for a reverse walk), and each is
    /// put in the sort's order before it is handed on:
    /// - Keys that agree on the whole encodings of the fields tie on the sort, which puts ties in
    ///   identifier order: a backward walk reads them in reverse identifier order, and a walk
    ///   over fewer fields than the index's in the order of the fields after them, so their
    ///   identifiers are sorted.
    /// - A value cut to a prefix (a long string, URL or data) among the fields ends the run at the
    ///   cut, since the values it stands for differ beyond it: the run's records are read and
    ///   ordered by the whole encodings of their values (descending for a reverse walk), then
    ///   identifier.
    ///
    /// Only the run being gathered is held, so a walk that stops at a limit reads one run past
    /// its last result at most.
    @discardableResult
    func sortedWalk(
        _ index: IndexStorage, _ range: KeyRange, _ order: QueryPlan.Walk, entity: EntityStorage, txn: StoreSnapshot,
        _ body: (_ key: UnsafeRawBufferPointer, _ record: UnsafeRawBufferPointer) throws -> Bool
    ) throws -> Bool {
        let fieldCount = min(order.fields ?? index.fieldPaths.count, index.fieldPaths.count)
        let reverse = order.reverse
        // The name alone, for the error: a function that captured the index copied it (each of
        // its references retained) into every closure that calls it, for every record.
        let indexName = index.name
        func record(_ id: UnsafeRawBufferPointer) throws -> UnsafeRawBufferPointer {
            guard let record = try Self.storedRecord(id, of: entity, in: txn) else {
                throw RillError(
                    .corruptStore, "the index \(entity.name)(\(indexName)) lists a record that does not exist")
            }
            return record
        }
        func emit(_ id: UnsafeRawBufferPointer) throws -> Bool {
            try Self.withRecord(id, of: entity, in: txn, stored: { try record(id) }) { try body(id, $0) }
        }
        // The run being gathered: the keys' bytes up to the end of the order's fields (or of a cut
        // value among them), and the identifiers of its records. The buffers are reused from run
        // to run, so that a walk of distinct values copies each identifier once and allocates
        // nothing for it.
        let run = WalkState(SortedRun())
        func flush() throws -> Bool {
            guard !run.value.ids.isEmpty else { return true }
            defer { run.value.clear() }
            if run.value.isCut { return try handOnCut(run.value.ids.arrays()) }
            // A run of one record (of a key listing several, or a cut value's): handed on as it is.
            if run.value.ids.count == 1 { return try run.value.ids.withFirst(emit) }
            return try run.value.ids.forEach(sorted: true, emit)
        }
        // A run that ends at a cut value: its records are read and ordered by the whole values.
        func handOnCut(_ ids: [[UInt8]]) throws -> Bool {
            var members: [(values: [UInt8], id: [UInt8], bytes: UnsafeRawBufferPointer)] = []
            for id in ids {
                let bytes = try id.withUnsafeBytes { try record($0) }
                let value = try id.withUnsafeBytes {
                    try Self.recordValue(bytes, key: $0, entity: entity.name, fields: index.topLevelFields)
                }
                var values: [UInt8] = []
                for path in index.fieldPaths.prefix(fieldCount) {
                    try IndexKey.append(QueryEvaluator.read(path, from: value), to: &values)
                }
                members.append((values, id, bytes))
            }
            members.sort { a, b in
                if a.values != b.values {
                    return reverse ? OrderKey.precedes(b.values, a.values) : OrderKey.precedes(a.values, b.values)
                }
                return a.id.lexicographicallyPrecedes(b.id)
            }
            for member in members {
                guard try member.id.withUnsafeBytes({ try body($0, member.bytes) }) else { return false }
            }
            return true
        }
        // The last key read while it is a run of one record so far, the usual case where the
        // values are distinct: held where LMDB keeps it (its bytes stay put for the read
        // transaction), not copied into the run, and handed on once the next key differs. In a
        // `WalkState`: a local variable the nested functions share is checked for exclusive
        // access at every use (three checks a key, more than the rest of the key's work).
        let pending = WalkState<(key: UnsafeRawBufferPointer, end: Int, length: Int)?>(nil)
        func handOnPending() throws -> Bool {
            guard let held = pending.value else { return true }
            pending.value = nil
            return try emit(UnsafeRawBufferPointer(rebasing: held.key[held.length...]))
        }
        func visit(_ key: UnsafeRawBufferPointer, _ value: UnsafeRawBufferPointer) throws -> Bool {
            let extent = try Self.runExtent(of: key, index, fields: fieldCount, entity: entity.name)
            let prefix = UnsafeRawBufferPointer(rebasing: key[..<extent.end])
            if let held = pending.value {
                if !extent.isCut, sameBytes(UnsafeRawBufferPointer(rebasing: held.key[..<held.end]), prefix) {
                    // A tie: the held record begins a run of several.
                    pending.value = nil
                    run.value.prefix.append(contentsOf: prefix.assumingMemoryBound(to: UInt8.self))
                    run.value.isCut = false
                    run.value.ids.append(UnsafeRawBufferPointer(rebasing: held.key[held.length...]))
                } else {
                    guard try handOnPending() else { return false }
                }
            }
            let continues =
                !run.value.ids.isEmpty && run.value.isCut == extent.isCut
                && run.value.prefix.withUnsafeBytes { sameBytes($0, prefix) }
            if !continues {
                guard try flush() else { return false }
                if value.isEmpty, !extent.isCut {
                    pending.value = (key, extent.end, extent.length)
                    return true
                }
                run.value.prefix.append(contentsOf: prefix.assumingMemoryBound(to: UInt8.self))
                run.value.isCut = extent.isCut
            }
            if value.isEmpty {
                // The common case: one identifier, the key's suffix.
                run.value.ids.append(UnsafeRawBufferPointer(rebasing: key[extent.length...]))
            } else {
                for id in try IndexEntry.list(value, index: index.name) {
                    id.withUnsafeBytes { run.value.ids.append($0) }
                }
            }
            return true
        }
        let completed =
            reverse
            ? try txn.forEachEntryBackwards(of: index, from: range.lower, before: range.upper, visit)
            : try Self.forEachIndexEntry(of: index, in: range, txn: txn, visit)
        // At most one of the two holds records: a key is held only once the run is handed on.
        return try completed && handOnPending() && flush()
    }

    /// Where a key's run ends (after its first `fields` values, or after the first of them that is
    /// cut, `isCut` then), and the length of all its values (the identifier, or its prefix, follows).
    ///
    /// - Throws: `RillError(.corruptStore)` naming the index when the key is malformed.
    private static func runExtent(
        of key: UnsafeRawBufferPointer, _ index: IndexStorage, fields: Int, entity: String
    ) throws -> (end: Int, isCut: Bool, length: Int) {
        var offset = 0
        var end = 0
        var cutEnd: Int?
        do {
            for field in index.fieldPaths.indices {
                let isCut = try IndexKey.skip(key, offset: &offset).isCut
                guard field < fields else { continue }
                if isCut, cutEnd == nil { cutEnd = offset }
                end = offset
            }
        } catch {
            throw RillError(
                .corruptStore, "the index \(entity)(\(index.name)) holds a malformed key: \(error)",
                underlyingError: error)
        }
        return (cutEnd ?? end, cutEnd != nil, offset)
    }
}

/// The records of a sorted walk that tie on its order's fields (see `Store.sortedWalk`): the
/// bytes the keys share, and the identifiers.
private struct SortedRun {
    var prefix: [UInt8] = []
    var isCut = false
    var ids = IdentifierList()

    /// Empties the run, keeping its buffers.
    mutating func clear() {
        prefix.removeAll(keepingCapacity: true)
        ids.removeAll()
    }
}
