import CSQLite
import Foundation

/// The query benchmark's records in SQLite, the peer of Rill's `Entry`: a table with the same
/// columns (`id` the INTEGER PRIMARY KEY, `createdAt` as seconds since 1970) and the same three
/// indexes (`code`, `category`, `amount`), each query a prepared statement bound anew for every
/// run that reads every column of every row into an `Entry`, as Rill materializes its records.
///
/// Settings, SQLite's best for the case: WAL; `synchronous=OFF` (Rill's load is `.unsynced`:
/// neither side flushes); a page cache of 1 GiB, so that a load of a million rows with three
/// indexes is not made to spill pages halfway; and reads through a memory map (`mmap_size`), as
/// LMDB reads.
final class EntryTable {
    let database: SQLitePeer
    private let insert: SQLitePeer.Statement
    private let byCode: SQLitePeer.Statement
    private let byCategory: SQLitePeer.Statement
    private let aboveAmount: SQLitePeer.Statement
    private let belowAmount: SQLitePeer.Statement
    private let nameContains: SQLitePeer.Statement
    private let scanAboveAmount: SQLitePeer.Statement

    static let columns = "id, code, category, amount, createdAt, name"
    static let codeQuery = "SELECT \(columns) FROM entry WHERE code = ?"
    static let categoryQuery = "SELECT \(columns) FROM entry WHERE category = ?"
    static let rangeQuery = "SELECT \(columns) FROM entry WHERE amount > ? ORDER BY amount LIMIT 20"
    static let descendingQuery = "SELECT \(columns) FROM entry WHERE amount < ? ORDER BY amount DESC LIMIT 20"
    static let containsQuery = "SELECT \(columns) FROM entry WHERE instr(name, ?) > 0"
    /// `NOT INDEXED`: the same comparison forced to a scan of the table, as Rill's `forceScan`.
    static let scanQuery = "SELECT \(columns) FROM entry NOT INDEXED WHERE amount > ?"

    /// Creates the table and its indexes, empty, in a new database at `path`.
    init(path: String) {
        let database = SQLitePeer(path: path, synchronous: .off)
        self.database = database
        // mmap_size is capped by the build's SQLITE_MAX_MMAP_SIZE (printed by `settings`).
        database.execute(
            """
            PRAGMA cache_size = -1048576;
            PRAGMA mmap_size = 4294967296;
            CREATE TABLE entry(
                id INTEGER PRIMARY KEY, code INTEGER NOT NULL, category INTEGER NOT NULL,
                amount REAL NOT NULL, createdAt REAL NOT NULL, name TEXT NOT NULL);
            CREATE INDEX entry_code ON entry(code);
            CREATE INDEX entry_category ON entry(category);
            CREATE INDEX entry_amount ON entry(amount);
            """)
        insert = database.prepare("INSERT INTO entry(\(Self.columns)) VALUES (?, ?, ?, ?, ?, ?)")
        byCode = database.prepare(Self.codeQuery)
        byCategory = database.prepare(Self.categoryQuery)
        aboveAmount = database.prepare(Self.rangeQuery)
        belowAmount = database.prepare(Self.descendingQuery)
        nameContains = database.prepare(Self.containsQuery)
        scanAboveAmount = database.prepare(Self.scanQuery)
    }

    // MARK: - Loading

    /// Inserts `count` entries made by `entry`, in one transaction, through one prepared insert;
    /// the indexes exist already, so their upkeep is part of the load.
    func load(_ count: Int, _ entry: (Int) -> Entry) {
        database.transaction {
            for index in 0..<count {
                let made = entry(index)
                insert.bind(made.id, at: 1)
                insert.bind(made.code, at: 2)
                insert.bind(made.category, at: 3)
                insert.bind(made.amount, at: 4)
                insert.bind(made.createdAt.timeIntervalSince1970, at: 5)
                insert.bind(made.name, at: 6)
                insert.run()
            }
        }
    }

    /// Moves every page of the write-ahead log into the database file and empties the log (not
    /// timed): a reader then finds no page in the log and reads the file through the map.
    func checkpoint() {
        database.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    }

    // MARK: - Queries (each returns its row count)

    func entries(code: Int) -> Int {
        byCode.bind(code, at: 1)
        return Self.read(byCode).count
    }

    func entries(category: Int) -> Int {
        byCategory.bind(category, at: 1)
        return Self.read(byCategory).count
    }

    /// The first 20 entries above `amount`, by amount.
    func entries(above amount: Double) -> Int {
        aboveAmount.bind(amount, at: 1)
        return Self.read(aboveAmount).count
    }

    /// The last 20 entries below `amount`, by amount, the largest first.
    func entries(below amount: Double) -> Int {
        belowAmount.bind(amount, at: 1)
        return Self.read(belowAmount).count
    }

    /// A scan of the table for names holding `text` (`instr`: a plain substring test).
    func entries(nameContaining text: String) -> Int {
        nameContains.bind(text, at: 1)
        return Self.read(nameContains).count
    }

    /// A scan of the table for amounts above `amount`, the index on `amount` not used.
    func scannedEntries(above amount: Double) -> Int {
        scanAboveAmount.bind(amount, at: 1)
        return Self.read(scanAboveAmount).count
    }

    // MARK: - Facts

    /// SQLite's plan of `sql`, as `EXPLAIN QUERY PLAN` words it (to show which index serves it).
    func plan(of sql: String) -> String {
        let statement = database.prepare("EXPLAIN QUERY PLAN " + sql)
        var details: [String] = []
        while statement.step() { details.append(statement.string(at: 3)) }
        return details.joined(separator: "; ")
    }

    /// SQLite's version and the settings in effect, as SQLite reports them.
    func settings() -> String {
        func pragma(_ name: String) -> String {
            let statement = database.prepare("PRAGMA \(name)")
            return statement.step() ? statement.string(at: 0) : "?"
        }
        return "SQLite \(String(cString: sqlite3_libversion())): journal_mode=\(pragma("journal_mode")), "
            + "synchronous=\(pragma("synchronous")) (0: OFF), cache_size=\(pragma("cache_size")) (negative: KiB), "
            + "mmap_size=\(pragma("mmap_size")) bytes"
    }

    /// Steps `statement` to its end, reading every column of every row into an `Entry`, then
    /// resets it.
    private static func read(_ statement: SQLitePeer.Statement) -> [Entry] {
        var rows: [Entry] = []
        while statement.step() {
            rows.append(
                Entry(
                    id: statement.int(at: 0), code: statement.int(at: 1), category: statement.int(at: 2),
                    amount: statement.double(at: 3),
                    createdAt: Date(timeIntervalSince1970: statement.double(at: 4)), name: statement.string(at: 5)))
        }
        statement.reset()
        return rows
    }
}
