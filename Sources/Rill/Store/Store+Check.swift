import Foundation
import RillStorage

/// What `rill check` found: every way the store's projections and indexes differ from a replay
/// of its log.
package struct StoreCheckReport: Sendable {
    package var commits = 0
    package var records = 0
    package var indexKeys = 0
    /// Each problem in a sentence, naming the entity, record or index.
    package var problems: [String] = []
    /// Problems past the first `limit` are counted, not described.
    package var unreported = 0

    package var isHealthy: Bool { problems.isEmpty && unreported == 0 }

    fileprivate mutating func add(_ problem: @autoclosure () -> String, limit: Int) {
        if problems.count < limit { problems.append(problem()) } else { unreported += 1 }
    }
}

extension Store {
    /// Replays the log from its first commit and compares the result with the projections and
    /// every index, in one read transaction (one snapshot); also checks that the log is gapless
    /// and every entry readable, and holds every record to its entity's current schema or, for
    /// an entity no model type registered, to the field kinds its description declared. Last, it
    /// reads the storage's list of free pages, which writes take pages from.
    ///
    /// The replayed records are held in memory (about the size of the projections).
    package func check(reportLimit: Int = 50) throws -> StoreCheckReport {
        var report = StoreCheckReport()
        let names = try entityNames()
        var entities: [String: EntityStorage] = [:]
        for name in names { entities[name] = try entity(named: name) }
        // Opened before the transaction that reads it.
        let snapshot = try environment.database(named: Log.snapshotName, create: false)
        try withReadTransaction { txn in
            // The replay: entity → identifier key → record (a delete takes the record out),
            // from the snapshot of a compacted log.
            var replayed: [String: [[UInt8]: [UInt8]]] = [:]
            do {
                try log.forEachSnapshotRecord(in: txn, snapshot: snapshot) { entity, key, record in
                    replayed[entity, default: [:]][key] = record
                }
            } catch {
                report.add("\(error)", limit: reportLimit)
            }
            // A compacted log goes on from the commit after its horizon.
            var expected: UInt64 = 1
            do {
                if let horizon = try log.horizon(in: txn) { expected = horizon.sequence + 1 }
            } catch {
                report.add("\(error)", limit: reportLimit)
            }
            // The commit of the largest possible number, once met: any key after it is out of order.
            var reachedLast: UInt64?
            try log.forEachStoredEntry(in: txn) { read in
                if let last = reachedLast {
                    report.add(
                        "the log has keys after commit \(last), the largest possible: they are out of order",
                        limit: reportLimit)
                    return false
                }
                let sequence: UInt64
                switch read {
                case .success(let entry):
                    sequence = entry.sequence
                    for change in entry.changes {
                        replayed[change.entity, default: [:]][change.key] = change.record
                    }
                case .failure(let error):
                    report.add("a log entry after commit \(expected - 1) is unreadable: \(error)", limit: reportLimit)
                    return true
                }
                // Every number here comes from the file: damaged keys may be out of order,
                // zero or the largest UInt64, and none of that may trap.
                if sequence > expected {
                    report.add(
                        "the log jumps from commit \(expected - 1) to \(sequence): \(sequence - expected) missing",
                        limit: reportLimit)
                } else if sequence < expected {
                    report.add(
                        "the log's commit \(sequence) comes after commit \(expected - 1): its key is out of order",
                        limit: reportLimit)
                }
                report.commits += 1
                guard sequence < UInt64.max else {
                    reachedLast = sequence
                    return true
                }
                expected = max(expected, sequence + 1)
                return true
            }
            for name in Set(replayed.keys).union(names).sorted() {
                let records = replayed[name] ?? [:]
                guard let entity = entities[name] else {
                    if !records.isEmpty {
                        report.add(
                            "the log has records of \(name), but the store has no such entity", limit: reportLimit)
                    }
                    continue
                }
                func describe(_ key: [UInt8]) -> String {
                    "\(name) " + (key.withUnsafeBytes { AnyIdentifier(storageKey: $0) }.map { "\($0)" } ?? "\(key)")
                }
                // The projection against the replay.
                try txn.forEachEntry(in: entity.database) { rawKey, value in
                    let key = Array(rawKey)
                    report.records += 1
                    if Self.normalizedIdentifierKey(rawKey) != nil {
                        report.add(
                            "\(describe(key)) is keyed by its identifier as written, not in NFC (store format 4)",
                            limit: reportLimit)
                    }
                    if let logged = records[key] {
                        if !value.elementsEqual(logged) {
                            report.add("\(describe(key)) differs from the log's last version of it", limit: reportLimit)
                        }
                    } else {
                        report.add(
                            "\(describe(key)) is stored but the log deleted it or never wrote it", limit: reportLimit)
                    }
                    return true
                }
                // Every record against the schema its model type registered.
                if let schema = try Self.schema(of: name, in: txn, meta: meta) {
                    try txn.forEachEntry(in: entity.database) { rawKey, value in
                        let key = Array(rawKey)
                        guard let record = try? Store.recordValue(value, key: rawKey, entity: name) else {
                            report.add("\(describe(key)) is unreadable", limit: reportLimit)
                            return true
                        }
                        for problem in schema.problems(of: record) {
                            report.add(
                                "\(describe(key)) does not read as schema version \(schema.version): \(problem)",
                                limit: reportLimit)
                        }
                        return true
                    }
                } else if let declared = try Self.declaredShape(of: name, in: txn, meta: meta) {
                    // An entity no model type registered: every record against the field kinds its description
                    // declared, which writes given as JSON store.
                    try txn.forEachEntry(in: entity.database) { rawKey, value in
                        guard let record = try? Store.recordValue(value, key: rawKey, entity: name) else {
                            report.add("\(describe(Array(rawKey))) is unreadable", limit: reportLimit)
                            return true
                        }
                        for mismatch in declared.kindMismatches(in: record) {
                            report.add(
                                "\(describe(Array(rawKey))) holds \(mismatch.found) in `\(mismatch.field)`, which is "
                                    + "declared \(mismatch.declared)",
                                limit: reportLimit)
                        }
                        return true
                    }
                }
                // (A delete removed its record from the replay.)
                for (key, _) in records where try txn.get(key, in: entity.database) == nil {
                    report.add("\(describe(key)) is in the log but missing from the store", limit: reportLimit)
                }
                // Every index against the replayed records.
                for index in entity.indexes {
                    // Entries as (key, identifier key) pairs: a key can list several identifiers.
                    var wanted: Set<[[UInt8]]> = []
                    for (key, bytes) in records {
                        // A damaged record is a problem to report, not the end of the check.
                        do {
                            let record = try bytes.withUnsafeBytes { raw in
                                try key.withUnsafeBytes { try Store.recordValue(raw, key: $0, entity: name) }
                            }
                            wanted.insert([try index.entry(for: record, id: key, entity: name).key, key])
                        } catch {
                            report.add(
                                "the log's last version of \(describe(key)) cannot be indexed by "
                                    + "\(name)(\(index.name)): \(error)",
                                limit: reportLimit)
                        }
                    }
                    try txn.forEachEntry(in: index.database) { key, value in
                        let ids: [[UInt8]]
                        do {
                            let extent = try index.valuesExtent(of: key, entity: name)
                            ids = try IndexEntry.identifiers(
                                key: key, valuesLength: extent.length, value: value, index: index.name)
                        } catch {
                            report.add(
                                "index \(name)(\(index.name)) has a malformed entry: \(error)", limit: reportLimit)
                            return true
                        }
                        for id in ids {
                            report.indexKeys += 1
                            if wanted.remove([Array(key), id]) == nil {
                                report.add(
                                    "index \(name)(\(index.name)) has a key no record of the log gives",
                                    limit: reportLimit)
                            }
                        }
                        return true
                    }
                    if !wanted.isEmpty {
                        report.add(
                            "index \(name)(\(index.name)) lacks \(wanted.count) key(s) of the log's records",
                            limit: reportLimit)
                    }
                    // A unique index holds each set of values once (a writer before unique indexes ignored them).
                    if index.uniqueness != nil, let conflict = try? Self.firstConflict(in: index, of: entity, txn: txn)
                    {
                        report.add("the unique index \(name)(\(index.name)) is broken: \(conflict)", limit: reportLimit)
                    }
                }
            }
        }
        // Every write takes pages from the list of free pages, which no read of the records meets: walked in a
        // read of its own, which a damaged page fails.
        do {
            _ = try environment.countFreePages()
        } catch {
            report.add(
                "the store's list of free pages is damaged, so every write to it will fail (reads still work): "
                    + "\(error); restore it from a backup",
                limit: reportLimit)
        }
        return report
    }
}
