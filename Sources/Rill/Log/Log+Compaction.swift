import Foundation
import RillStorage

/// The log's horizon and snapshot: what `rill compact` leaves of the commits it folds.
///
/// Compacting the log up to commit H (its horizon) writes the state after H — every record of
/// every entity — into the `snapshot` database and drops the commits up to H. A replay (a
/// rebuild, `rill check`) then starts from the snapshot and applies the commits after H. Every
/// answer about commit H or later stays what it was; one about an earlier commit is refused with
/// `.historyCompacted`, naming the horizon.
///
/// Layout: `meta` key `log-horizon` → H (UInt64, big-endian) then its timestamp (Double bits,
/// big-endian); `snapshot` database: chunk number (UInt64, big-endian) → a run of records, each
/// entity name, identifier key and record (varint length, then bytes), chunks of about 1 MiB.
extension Log {
    /// The last commit folded into the snapshot, and when it was made.
    package struct Horizon: Sendable, Hashable {
        package var sequence: UInt64
        package var timestamp: Date
    }

    static let horizonKey = Array("log-horizon".utf8)
    /// The name of the database holding the snapshot.
    package static let snapshotName = "snapshot"
    /// The size a snapshot chunk grows to before the next begins.
    static let chunkSize = 1 << 20

    /// The horizon `snapshot` sees; nil for a log never compacted.
    package func horizon(in snapshot: StoreSnapshot) throws -> Horizon? {
        try horizon(in: snapshot.transaction)
    }

    func horizon(in txn: some Transaction) throws -> Horizon? {
        guard let raw = try txn.get(Self.horizonKey, in: meta) else { return nil }
        guard raw.count == 16 else {
            throw RillError(.corruptStore, "the log horizon of \(directory) is \(raw.count) bytes, not 16")
        }
        let sequence = raw[0..<8].reduce(UInt64(0)) { $0 << 8 | UInt64($1) }
        let bits = raw[8..<16].reduce(UInt64(0)) { $0 << 8 | UInt64($1) }
        return Horizon(sequence: sequence, timestamp: Date(timeIntervalSince1970: Double(bitPattern: bits)))
    }

    func setHorizon(_ horizon: Horizon, in txn: WriteTransaction) throws {
        var value = withUnsafeBytes(of: horizon.sequence.bigEndian) { Array($0) }
        value += withUnsafeBytes(of: horizon.timestamp.timeIntervalSince1970.bitPattern.bigEndian) { Array($0) }
        try txn.put(value, for: Self.horizonKey, in: meta)
    }

    /// Throws `.historyCompacted` when commit `sequence` is before the horizon: the log no
    /// longer tells what came after it, nor the state it left.
    package func requireRetained(_ sequence: UInt64, for what: String, in snapshot: StoreSnapshot) throws {
        guard let horizon = try horizon(in: snapshot), sequence < horizon.sequence else { return }
        throw compacted(horizon, asking: sequence, for: what)
    }

    /// The error for a read after `sequence` that found `first` next: `.historyCompacted` when
    /// `sequence` is before the horizon, else `.corruptStore` (a gap).
    func compactedError(asking sequence: UInt64, in txn: some Transaction, first: UInt64) throws -> RillError {
        if let horizon = try horizon(in: txn), sequence < horizon.sequence {
            return compacted(horizon, asking: sequence, for: "read the log after commit \(sequence)")
        }
        return RillError(
            .corruptStore,
            "the log of \(directory)/data.mdb has commit \(first) after commit \(sequence) "
                + "(a gap or a damaged key; run rill check)")
    }

    func compacted(_ horizon: Horizon, asking sequence: UInt64, for what: String) -> RillError {
        RillError(
            .historyCompacted,
            "cannot \(what): the log was compacted up to commit \(horizon.sequence) "
                + "(made \(ISO8601Time.string(horizon.timestamp))), its horizon; ask for commit \(horizon.sequence) or later"
        )
    }

    // MARK: - The snapshot

    /// Calls `body` with every record of the snapshot (entity, identifier key, record), in the
    /// order it was written (entity by entity, each in key order). `snapshot` is the database,
    /// nil when the store has none.
    func forEachSnapshotRecord(
        in txn: some Transaction, snapshot: Database?,
        _ body: (_ entity: String, _ key: [UInt8], _ record: [UInt8]) throws -> Void
    ) throws {
        guard let snapshot else { return }
        try txn.forEachEntry(in: snapshot) { _, value in
            var reader = ByteReader(value)
            do {
                while !reader.isAtEnd {
                    let entity = try reader.readString()
                    let key = Array(try reader.readBlob())
                    let record = Array(try reader.readBlob())
                    try body(entity, key, record)
                }
            } catch let error as ByteReader.Malformed {
                throw RillError(
                    .corruptStore, "the log snapshot of \(directory)/data.mdb is unreadable: \(error)",
                    underlyingError: error)
            }
            return true
        }
    }

    /// Writes a snapshot in chunks: records are added in order, a chunk is put once it is full.
    struct SnapshotWriter {
        let database: Database
        private var chunk: [UInt8] = []
        private var number: UInt64 = 0
        private(set) var records = 0

        init(database: Database) { self.database = database }

        mutating func add(
            entity: String, key: some Collection<UInt8>, record: some Collection<UInt8>, in txn: WriteTransaction
        ) throws {
            Self.appendVarint(UInt64(entity.utf8.count), to: &chunk)
            chunk += entity.utf8
            Self.appendVarint(UInt64(key.count), to: &chunk)
            chunk += key
            Self.appendVarint(UInt64(record.count), to: &chunk)
            chunk += record
            records += 1
            if chunk.count >= Log.chunkSize { try flush(in: txn) }
        }

        mutating func flush(in txn: WriteTransaction) throws {
            guard !chunk.isEmpty else { return }
            try txn.put(chunk, for: withUnsafeBytes(of: number.bigEndian) { Array($0) }, in: database)
            number += 1
            chunk.removeAll(keepingCapacity: true)
        }

        private static func appendVarint(_ value: UInt64, to bytes: inout [UInt8]) {
            var value = value
            while value >= 0x80 {
                bytes.append(UInt8(value & 0x7F) | 0x80)
                value >>= 7
            }
            bytes.append(UInt8(value))
        }
    }
}
