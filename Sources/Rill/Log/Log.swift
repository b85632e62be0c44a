import Foundation
import RillStorage

/// The store's log: every commit, under gapless sequence numbers from 1, in order.
///
/// The one owner of the log's storage: commits are appended here inside a save's write
/// transaction, and every reader — the store, the log follower of live queries, resumed
/// queries, `rill log` — reads them here, forwards from a sequence or backwards before one, in a
/// ``StoreSnapshot``. Its interface speaks of sequences and entries only, so that a log held
/// elsewhere (a replicated stream, see `Documentation/Architecture.md`) could stand behind it.
package struct Log: Sendable {
    /// The `log` database: sequence number (UInt64, big-endian) → encoded `LogEntry`.
    let database: Database
    /// The store directory, for errors.
    let directory: String
    /// The `meta` database, which holds the horizon (see `Log+Compaction.swift`).
    let meta: Database
    /// The store file's environment, which its watches ask who is writing the file.
    let environment: Environment
    /// The store file, whose watches this process's commits wake.
    var file: StoreFileID { StoreFileID(environment.fileID) }

    init(database: Database, meta: Database, directory: String, environment: Environment) {
        self.database = database
        self.meta = meta
        self.directory = directory
        self.environment = environment
    }

    // MARK: - Appending

    /// The sequence number and the timestamp the next commit in `txn` takes, from one read of
    /// the last entry: the last sequence + 1, and now — or the last commit's timestamp when the
    /// clock reads earlier (it stepped back), so that timestamps never decrease along the log and
    /// a date finds its commit by binary search (``lastSequence(atOrBefore:in:)``).
    ///
    /// - Throws: `.corruptStore` when the last log key is the largest sequence number (a damaged
    ///   key: no store makes that many commits), rather than wrapping around or trapping.
    func next(in txn: WriteTransaction) throws -> (sequence: UInt64, timestamp: Date) {
        let now = Date()
        let last = try txn.withLastEntry(in: database) { key, value in
            (try LogEntry.sequence(fromKey: key), try LogEntry.timestamp(of: value))
        }
        guard let last else { return (1, now) }
        guard last.0 < UInt64.max else {
            throw RillError(
                .corruptStore,
                "the log of \(directory)/data.mdb ends with commit \(last.0), the largest possible number: "
                    + "its last key is damaged (run rill check), and no commit can follow it")
        }
        return (last.0 + 1, max(now, last.1))
    }

    /// Appends `entry` (whose sequence is `next(in:)`'s) in the save's transaction, written
    /// once, straight into the page that keeps it.
    func append(_ entry: LogEntry, in txn: WriteTransaction) throws {
        let space = try LogEntry.key(for: entry.sequence).withUnsafeBytes { key in
            try txn.reserve(entry.encodedSize, for: key, in: database, append: true)
        }
        entry.write(into: space)
    }

    /// Tells every watch of the store file in this process (``LogWatch``) that the log holds
    /// commits up to `sequence`: called once the commit's transaction committed, never inside it.
    func publishCommitted(through sequence: UInt64) {
        LogWatch.post(to: file)
    }

    // MARK: - Following

    /// A new watch of the log, woken by this process's commits and other processes' (see
    /// ``LogWatch``); the caller reads the log after each wake-up, and closes the watch when done.
    package func watch() throws -> LogWatch {
        try LogWatch(file: file, directory: directory) { [environment] in environment.commitActivity }
    }

    // MARK: - Reading

    /// The sequence number of the last commit `snapshot` sees, 0 for an empty log.
    package func head(in snapshot: StoreSnapshot) throws -> UInt64 {
        try head(in: snapshot.transaction)
    }

    func head(in txn: some Transaction) throws -> UInt64 {
        try txn.withLastKey(in: database) { try LogEntry.sequence(fromKey: $0) } ?? 0
    }

    /// The sequence number of the first commit `snapshot` sees, nil for an empty log.
    package func first(in snapshot: StoreSnapshot) throws -> UInt64? {
        try snapshot.transaction.withFirstKey(in: database) { try LogEntry.sequence(fromKey: $0) }
    }

    /// The timestamp of commit `sequence`, nil when the log does not hold it.
    package func timestamp(of sequence: UInt64, in snapshot: StoreSnapshot) throws -> Date? {
        guard let value = try snapshot.transaction.get(LogEntry.key(for: sequence), in: database) else { return nil }
        return try LogEntry.timestamp(of: value)
    }

    /// The last commit made at or before `date`, as `snapshot` sees the log: the horizon of a
    /// compacted log when the date is between it and the first commit held, and 0 when the date
    /// is earlier (or the log is empty).
    ///
    /// A binary search on sequence numbers, which are gapless from the first commit held to the
    /// head, and on timestamps, which never decrease along the log (``next(in:)``; a log
    /// written before Rill kept them so is searched the same way, and a clock that stepped back
    /// then can make the answer a neighbour of the exact one).
    package func lastSequence(atOrBefore date: Date, in snapshot: StoreSnapshot) throws -> UInt64 {
        guard let first = try first(in: snapshot) else { return 0 }
        let head = try head(in: snapshot)
        func time(_ sequence: UInt64) throws -> Date {
            guard let time = try timestamp(of: sequence, in: snapshot) else {
                throw RillError(
                    .corruptStore,
                    "the log of \(directory)/data.mdb lacks commit \(sequence), between \(first) and \(head) "
                        + "(a gap; run rill check)")
            }
            return time
        }
        guard try time(first) <= date else {
            // Before the first commit held: the horizon's state, when the date is after it.
            if let horizon = try horizon(in: snapshot), date >= horizon.timestamp { return horizon.sequence }
            return 0
        }
        // Invariant: commit `low` is at or before `date`; every commit past `high` is after it.
        var (low, high) = (first, head)
        while low < high {
            let middle = low + (high - low + 1) / 2
            if try time(middle) <= date { low = middle } else { high = middle - 1 }
        }
        return low
    }

    /// The first commit made at or after `date` (one past the head when none was): the one a
    /// compaction "before the date" keeps first.
    package func firstSequence(madeAtOrAfter date: Date, in snapshot: StoreSnapshot) throws -> UInt64 {
        let earlier = Date(timeIntervalSinceReferenceDate: date.timeIntervalSinceReferenceDate.nextDown)
        return try lastSequence(atOrBefore: earlier, in: snapshot) + 1
    }

    /// The number of commits `snapshot` sees.
    package func entryCount(in snapshot: StoreSnapshot) throws -> Int {
        try snapshot.transaction.count(of: database)
    }

    /// Up to `limit` commits after `sequence`, in order, as `snapshot` sees them.
    ///
    /// - Throws: `.corruptStore` when a key is not greater than the one before it (a damaged
    ///   key: LMDB's search then lands anywhere), so that no reader of the log pages through it
    ///   forever or applies a commit twice.
    package func entries(after sequence: UInt64, limit: Int = .max, in snapshot: StoreSnapshot) throws -> [LogEntry] {
        try entries(after: sequence, limit: limit, in: snapshot.transaction)
    }

    func entries(after sequence: UInt64, limit: Int = .max, in txn: some Transaction) throws -> [LogEntry] {
        guard limit > 0 else { return [] }
        var entries: [LogEntry] = []
        try forEachEntry(after: sequence, in: txn) { entry in
            entries.append(entry)
            return entries.count < limit
        }
        return entries
    }

    /// Calls `body` with each commit after `sequence`, in order, as `snapshot` sees them, until
    /// `body` returns false.
    ///
    /// - Throws: `.corruptStore` as ``entries(after:limit:in:)`` does.
    package func forEachEntry(
        after sequence: UInt64, in snapshot: StoreSnapshot, _ body: (LogEntry) throws -> Bool
    ) throws {
        try forEachEntry(after: sequence, in: snapshot.transaction, body)
    }

    func forEachEntry(after sequence: UInt64, in txn: some Transaction, _ body: (LogEntry) throws -> Bool) throws {
        guard sequence < UInt64.max else { return }
        var previous = sequence
        try txn.forEachEntry(in: database, from: LogEntry.key(for: sequence + 1)) { key, value in
            let number = try LogEntry.sequence(fromKey: key)
            guard number > previous else {
                throw RillError(
                    .corruptStore,
                    "the log of \(directory)/data.mdb is out of order: commit \(number) follows commit \(previous) "
                        + "(a damaged key; run rill check)")
            }
            // The log is gapless from its first commit held: a jump past the commit asked for
            // means those before were compacted (or the key is damaged).
            if previous == sequence, number != sequence + 1 {
                throw try compactedError(asking: sequence, in: txn, first: number)
            }
            let entry: LogEntry
            do {
                entry = try LogEntry(sequence: number, bytes: value)
            } catch {
                throw RillError(
                    .corruptStore,
                    "the log of \(directory)/data.mdb has an unreadable entry after commit \(previous) "
                        + "(run rill check): \(error)", underlyingError: error)
            }
            previous = number
            return try body(entry)
        }
    }

    /// Calls `body` with each commit before `sequence`, newest first, as `snapshot` sees them,
    /// until `body` returns false.
    package func forEachEntry(
        before sequence: UInt64, in snapshot: StoreSnapshot, _ body: (LogEntry) throws -> Bool
    ) throws {
        try snapshot.transaction.forEachEntryBackwards(in: database, before: LogEntry.key(for: sequence)) {
            key, value in
            try body(LogEntry(sequence: try LogEntry.sequence(fromKey: key), bytes: value))
        }
    }

    /// Calls `body` with each commit of the log as `txn` sees it, in key order, or with the error
    /// that reading it gave (a key or an entry that does not decode), until `body` returns false.
    ///
    /// The one reader that does not refuse a damaged log: keys out of order, repeated or missing
    /// are `body`'s to find (it is `rill check`'s), where the other readers throw `.corruptStore`.
    func forEachStoredEntry(in txn: ReadTransaction, _ body: (Result<LogEntry, any Error>) throws -> Bool) throws {
        try txn.forEachEntry(in: database) { key, value in
            try body(Result { try LogEntry(sequence: try LogEntry.sequence(fromKey: key), bytes: value) })
        }
    }
}
