import Foundation
import RillLocks
import RillStorage
import RillTestSupport
import RillWorkloads
import Testing

@testable import Rill

/// Each update and delete of the log carries the record before it: held to a replay of the log
/// into a dictionary, for saves of every kind, with and without indexes; and an older store's
/// entries, which lack them, get exactly those records when the store is raised to format 3.
@Suite struct LogBeforeImageTests {
    let directory = TemporaryDirectory()

    /// Random saves of inserts, whole-record upserts, field updates (some removing a field) and
    /// deletes over a few keys of an indexed entity and an unindexed one.
    static func randomRun(in path: String, commits: Int, generator: inout SeededGenerator) throws -> Store {
        let store = try Store(directory: path, options: StoreOptions(), create: true)
        let indexed = try store.registerEntity(named: "Indexed", identifierKind: .integer, indexes: [[["score"]]])
        let plain = try store.registerEntity(named: "Plain", identifierKind: .integer)
        for _ in 0..<commits {
            var changes: [PreparedChange] = []
            // Whether a record exists once the commit's earlier changes applied.
            var pending: [String: Bool] = [:]
            for _ in 0..<Int.random(in: 1...4, using: &generator) {
                let entity = Bool.random(using: &generator) ? indexed : plain
                let key = Int.random(in: 0..<12, using: &generator).storageKey
                let name = "\(entity.name)/\(key)"
                let exists = try pending[name] ?? (store.record(of: entity, key: key) != nil)
                let score = RecordValue.int(Int64.random(in: -3...3, using: &generator))
                switch Int.random(in: 0..<10, using: &generator) {
                case 0..<4:
                    var fields = [RecordField(name: "score", value: score)]
                    if Bool.random(using: &generator) {
                        fields.append(
                            RecordField(name: "note", value: .string("n\(Int.random(in: 0..<3, using: &generator))")))
                    }
                    changes.append(
                        PreparedChange(
                            entity: entity, key: key, operation: .upsert(RecordValue.map(fields).recordBytes())))
                case 4..<7 where exists:
                    // A null removes the field: the update's record lacks it, the one before has it.
                    let note: RecordValue = Bool.random(using: &generator) ? .null : .string("u")
                    changes.append(
                        PreparedChange(
                            entity: entity, key: key,
                            operation: .update([
                                RecordField(name: "score", value: score), RecordField(name: "note", value: note),
                            ])))
                default:
                    changes.append(PreparedChange(entity: entity, key: key, operation: .delete))
                }
                if case .delete = changes.last!.operation { pending[name] = false } else { pending[name] = true }
            }
            _ = try store.commit(changes, author: nil)
        }
        return store
    }

    /// Every commit of the log, in order.
    static func log(of store: Store) throws -> [LogEntry] {
        try store.read { try store.log.entries(after: 0, in: $0) }
    }

    /// The entry as a store of format 2 wrote it (entry format 1): without the records before.
    static func formatOneBytes(_ entry: LogEntry) -> [UInt8] {
        var bytes: [UInt8] = [1]
        withUnsafeBytes(of: entry.timestamp.timeIntervalSince1970.bitPattern.littleEndian) { bytes += $0 }
        func varint(_ value: Int) {
            var value = UInt64(value)
            while value >= 0x80 {
                bytes.append(UInt8(value & 0x7F) | 0x80)
                value >>= 7
            }
            bytes.append(UInt8(value))
        }
        func blob(_ data: [UInt8]) {
            varint(data.count)
            bytes += data
        }
        if let author = entry.author {
            varint(author.utf8.count + 1)
            bytes += author.utf8
        } else {
            varint(0)
        }
        varint(entry.changes.count)
        for change in entry.changes {
            bytes.append(change.kind.rawValue)
            blob(Array(change.entity.utf8))
            blob(change.key)
            if change.kind == .update {
                varint(change.changedFields.count)
                for field in change.changedFields { blob(Array(field.utf8)) }
            }
            if change.kind != .delete { blob(change.record ?? []) }
        }
        return bytes
    }

    @Test func updatesAndDeletesCarryTheRecordAsTheReplayHadIt() throws {
        var generator = SeededGenerator(label: "log-before-images")
        let store = try Self.randomRun(in: directory.path("store"), commits: 400, generator: &generator)
        var state: [String: [[UInt8]: [UInt8]]] = [:]
        var counts: [LogEntry.Kind: Int] = [:]
        for entry in try Self.log(of: store) {
            #expect(entry.holdsBeforeImages)
            for change in entry.changes {
                let previous = state[change.entity]?[change.key]
                counts[change.kind, default: 0] += 1
                switch change.kind {
                case .insert:
                    #expect(previous == nil, "commit \(entry.sequence) inserts a record that exists")
                    #expect(change.before == nil)
                case .update, .delete:
                    #expect(
                        previous != nil && change.before == previous, "commit \(entry.sequence), seed \(generator.seed)"
                    )
                }
                state[change.entity, default: [:]][change.key] = change.record
            }
        }
        #expect(counts.count == 3 && counts.values.allSatisfy { $0 > 50 }, "\(counts)")
        // The bytes round-trip: what a reader decodes is what the save wrote.
        for entry in try Self.log(of: store) {
            #expect(try entry.encoded.withUnsafeBytes { try LogEntry(sequence: entry.sequence, bytes: $0) } == entry)
        }
    }

    @Test func anOlderStoreIsRaisedToFormatThreeWithTheRecordsBeforeEachChange() throws {
        var generator = SeededGenerator(label: "log-format-upgrade")
        let path = directory.path("store")
        let (original, records) = try {
            let store = try Self.randomRun(in: path, commits: 300, generator: &generator)
            let original = try Self.log(of: store)
            let indexed = try #require(try store.entity(named: "Indexed"))
            var records: [[UInt8]: [UInt8]] = [:]
            try store.forEachRecord(of: indexed) { key, value in
                records[Array(key)] = Array(value)
                return true
            }
            // The store as Rill of format 2 left it: entries of format 1.
            try store.withWriteTransaction { txn in
                for entry in original {
                    try txn.put(
                        Self.formatOneBytes(entry), for: LogEntry.key(for: entry.sequence), in: store.log.database)
                }
                try txn.put([0, 0, 0, 2], for: Array("format".utf8), in: store.meta)
            }
            let old = try Self.log(of: store)
            #expect(old.allSatisfy { !$0.holdsBeforeImages && $0.changes.allSatisfy { $0.before == nil } })
            #expect(old.map(\.changes.count) == original.map(\.changes.count))
            return (original, records)
        }()
        let phases = ProgressLog()
        let store = try Store(
            directory: path, options: StoreOptions(), create: false, progress: { phases.add($0.phase) })
        let format = try store.withReadTransaction { txn in
            try txn.get(Array("format".utf8), in: store.meta).map(Array.init)
        }
        #expect(format == [0, 0, 0, 4])
        #expect(try Self.log(of: store) == original)
        #expect(phases.all.contains(.replayingLog))
        let indexed = try #require(try store.entity(named: "Indexed"))
        var after: [[UInt8]: [UInt8]] = [:]
        try store.forEachRecord(of: indexed) { key, value in
            after[Array(key)] = Array(value)
            return true
        }
        #expect(after == records)
        #expect(try store.check().isHealthy)
        // Opening it again writes nothing more.
        let reopened = try Store(directory: path, options: StoreOptions(readOnly: true), create: false)
        #expect(try Self.log(of: reopened) == original)
    }

    /// Phases reported during an open.
    final class ProgressLog: Sendable {
        private let phases = Lock<[StoreProgress.Phase]>([])
        func add(_ phase: StoreProgress.Phase) { phases.withLock { $0.append(phase) } }
        var all: [StoreProgress.Phase] { phases.withLock { $0 } }
    }
}
