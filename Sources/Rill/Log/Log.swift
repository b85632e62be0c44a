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
    /// The store file, whose watches this process's commits wake.
    let file: StoreFileID

    init(database: Database, directory: String, file: StoreFileID) {
        self.database = database
        self.directory = directory
        self.file = file
    }

    // MARK: - Appending

    /// The sequence number the next commit in `txn` takes.
    ///
    /// - Throws: `.corruptStore` when the last log key is the largest sequence number (a damaged
    ///   key: no store makes that many commits), rather than wrapping around or trapping.
    func nextSequence(in txn: WriteTransaction) throws -> UInt64 {
        let last = try head(in: txn)
        guard last < UInt64.max else {
            throw RillError(
                .corruptStore,
                "the log of \(directory)/data.mdb ends with commit \(last), the largest possible number: "
                    + "its last key is damaged (run rill check), and no commit can follow it")
        }
        return last + 1
    }

    /// Appends `entry` (whose sequence is `nextSequence(in:)`) in the save's transaction, written
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
        try LogWatch(file: file, directory: directory)
    }

    // MARK: - Reading

    /// The sequence number of the last commit `snapshot` sees, 0 for an empty log.
    package func head(in snapshot: StoreSnapshot) throws -> UInt64 {
        try head(in: snapshot.transaction)
    }

    func head(in txn: some Transaction) throws -> UInt64 {
        try txn.withLastKey(in: database) { try LogEntry.sequence(fromKey: $0) } ?? 0
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
        guard sequence < UInt64.max, limit > 0 else { return [] }
        var entries: [LogEntry] = []
        var previous = sequence
        try txn.forEachEntry(in: database, from: LogEntry.key(for: sequence + 1)) { key, value in
            let number = try LogEntry.sequence(fromKey: key)
            guard number > previous else {
                throw RillError(
                    .corruptStore,
                    "the log of \(directory)/data.mdb is out of order: commit \(number) follows commit \(previous) "
                        + "(a damaged key; run rill check)")
            }
            do {
                entries.append(try LogEntry(sequence: number, bytes: value))
            } catch {
                throw RillError(
                    .corruptStore,
                    "the log of \(directory)/data.mdb has an unreadable entry after commit \(previous) "
                        + "(run rill check): \(error)", underlyingError: error)
            }
            previous = number
            return entries.count < limit
        }
        return entries
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
