import Foundation
import Testing

@testable import Rill

/// Replays a store's log from the start and compares the result with its projections.
struct StoreAudit {
    var head: UInt64 = 0
    var sequences: [UInt64] = []
    /// entity → identifier key → record, as the log says.
    var replayed: [String: [[UInt8]: [UInt8]]] = [:]
    /// entity → identifier key → record, as the projections hold.
    var projected: [String: [[UInt8]: [UInt8]]] = [:]
    /// "entity(index)" → whether the index holds exactly the keys computed from the projection.
    var indexesMatch: [String: Bool] = [:]

    /// The audit of the store in `directory`, or nil when the directory holds no store: nothing at
    /// all, or a creation cut short before anything was saved (both `.storeNotFound`).
    static func ofStoreIfAny(in directory: String) throws -> StoreAudit? {
        do {
            return try StoreAudit(directory: directory)
        } catch let error as RillError where error.code == .storeNotFound {
            return nil
        }
    }

    init(directory: String) throws {
        let store = try Store(directory: directory, options: StoreOptions(), create: false)
        head = try store.head()
        for entry in try store.entries(after: 0) {
            sequences.append(entry.sequence)
            for change in entry.changes {
                replayed[change.entity, default: [:]][change.key] = change.record
            }
        }
        for name in try store.entityNames() {
            guard let entity = try store.entity(named: name) else { continue }
            var records: [[UInt8]: [UInt8]] = [:]
            try store.forEachRecord(of: entity) { key, value in
                records[Array(key)] = Array(value)
                return true
            }
            projected[name] = records
            for index in entity.indexes {
                // Entries as (key, identifier key) pairs: a key can list several identifiers.
                var expected: Set<[[UInt8]]> = []
                for (key, bytes) in records {
                    let record = try bytes.withUnsafeBytes { try RecordValue(record: $0) }
                    expected.insert([try index.entry(for: record, id: key, entity: name).key, key])
                }
                var stored: Set<[[UInt8]]> = []
                try store.read { snapshot in
                    try snapshot.forEachEntry(of: index) { key, value in
                        let extent = try index.valuesExtent(of: key, entity: name)
                        let ids = try IndexEntry.identifiers(
                            key: key, valuesLength: extent.length, value: value, index: index.name)
                        for id in ids { stored.insert([Array(key), id]) }
                        return true
                    }
                }
                indexesMatch["\(name)(\(index.name))"] = stored == expected
            }
        }
    }

    /// The log is gapless from 1 to its head.
    var isGapless: Bool { sequences == Array(1..<(head + 1)) }

    /// Every index holds exactly the keys of the projection's records.
    var indexesMatchProjection: Bool { indexesMatch.values.allSatisfy { $0 } }

    /// The projections equal a replay of the log.
    var projectionsMatchReplay: Bool {
        let names = Set(replayed.keys).union(projected.keys)
        return names.allSatisfy { (replayed[$0] ?? [:]) == (projected[$0] ?? [:]) }
    }
}
