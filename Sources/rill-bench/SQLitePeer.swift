import CSQLite
import Foundation

/// A SQLite database through its C API, the benchmarks' peer: the library most Swift users would
/// otherwise reach for (through GRDB or SQLiteData), doing the same work as Rill in the same run,
/// with its best settings for the case: WAL, prepared statements, the same indexes.
///
/// One connection per thread, as SQLite wants it; a failure stops the benchmark with SQLite's
/// message (a benchmark whose peer fails measures nothing).
final class SQLitePeer {
    let connection: OpaquePointer

    /// How each commit reaches the disk: `.full` is `synchronous=FULL` (durable on return, like
    /// Rill's default), `.normal` is SQLite's usual WAL setting (durable at checkpoints).
    enum Synchronous: String {
        case off = "OFF"
        case normal = "NORMAL"
        case full = "FULL"
    }

    /// Opens (creating) the database at `path` in WAL mode with `synchronous`.
    init(path: String, synchronous: Synchronous = .full) {
        var connection: OpaquePointer?
        let flags = SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_NOMUTEX
        let rc = sqlite3_open_v2(path, &connection, flags, nil)
        precondition(rc == SQLITE_OK, "sqlite3_open_v2 \(path): \(String(cString: sqlite3_errstr(rc)))")
        self.connection = connection!
        // A writer waiting on another's lock retries for up to a minute instead of failing.
        sqlite3_busy_timeout(connection, 60_000)
        execute("PRAGMA journal_mode=WAL")
        execute("PRAGMA synchronous=\(synchronous.rawValue)")
    }

    deinit { sqlite3_close_v2(connection) }

    /// Runs `sql` (one or more statements, no parameters), dropping any rows.
    func execute(_ sql: String) {
        var message: UnsafeMutablePointer<CChar>?
        let rc = sqlite3_exec(connection, sql, nil, nil, &message)
        if rc != SQLITE_OK {
            let text = message.map { String(cString: $0) } ?? String(cString: sqlite3_errstr(rc))
            sqlite3_free(message)
            preconditionFailure("sqlite3_exec \(sql): \(text)")
        }
    }

    /// Compiles `sql` once, to be bound and stepped many times.
    func prepare(_ sql: String) -> Statement { Statement(connection: connection, sql: sql) }

    /// Runs `body` in one transaction (`BEGIN IMMEDIATE` … `COMMIT`).
    func transaction<T>(_ body: () throws -> T) rethrows -> T {
        execute("BEGIN IMMEDIATE")
        let result = try body()
        execute("COMMIT")
        return result
    }

    /// A prepared statement. Parameters are numbered from 1 and columns from 0, as in SQLite's API.
    final class Statement {
        let statement: OpaquePointer
        private let connection: OpaquePointer

        fileprivate init(connection: OpaquePointer, sql: String) {
            var statement: OpaquePointer?
            let rc = sqlite3_prepare_v3(connection, sql, -1, UInt32(SQLITE_PREPARE_PERSISTENT), &statement, nil)
            precondition(rc == SQLITE_OK, "sqlite3_prepare_v3 \(sql): \(String(cString: sqlite3_errmsg(connection)))")
            self.statement = statement!
            self.connection = connection
        }

        deinit { sqlite3_finalize(statement) }

        /// Makes the statement ready to run again; its bindings stay until bound anew.
        func reset() { sqlite3_reset(statement) }

        func bind(_ value: Int, at index: Int32) { check(sqlite3_bind_int64(statement, index, Int64(value))) }
        func bind(_ value: Double, at index: Int32) { check(sqlite3_bind_double(statement, index, value)) }
        func bind(_ value: String, at index: Int32) {
            // SQLITE_TRANSIENT: SQLite copies the text before the call returns.
            check(sqlite3_bind_text(statement, index, value, -1, unsafeBitCast(-1, to: sqlite3_destructor_type.self)))
        }

        /// Steps once: true when a row is ready to read, false when the statement is done.
        func step() -> Bool {
            let rc = sqlite3_step(statement)
            if rc == SQLITE_ROW { return true }
            precondition(rc == SQLITE_DONE, "sqlite3_step: \(String(cString: sqlite3_errmsg(connection)))")
            return false
        }

        /// Steps to the end (an insert, an update), then resets.
        func run() {
            while step() {}
            reset()
        }

        func int(at column: Int32) -> Int { Int(sqlite3_column_int64(statement, column)) }
        func double(at column: Int32) -> Double { sqlite3_column_double(statement, column) }
        func string(at column: Int32) -> String {
            guard let text = sqlite3_column_text(statement, column) else { return "" }
            return String(cString: text)
        }

        private func check(_ rc: Int32) {
            precondition(rc == SQLITE_OK, "sqlite3_bind: \(String(cString: sqlite3_errmsg(connection)))")
        }
    }
}
