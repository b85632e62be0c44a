import Foundation
import Rill
import RillLocks

/// Durable single-record saves from many threads at once: Rill's, each thread with a context of
/// its own on one container, beside SQLite's, each thread with a connection of its own on one
/// database (WAL, `synchronous=FULL`, one insert per transaction).
struct ConcurrentSaves {
    var savesPerWriter = 200

    /// Saves per second (all writers together) from `writers` threads, each doing
    /// `savesPerWriter` saves of one `Item`.
    func rill(writers: Int, directory: URL) throws -> Double {
        let container = try ModelContainer(for: Item.self, configurations: ModelConfiguration(url: directory))
        let seconds = Self.timeSaves(Array(repeating: container, count: writers), savesPerWriter)
        let saved = try ModelContext(container).fetchCount(FetchDescriptor<Item>())
        precondition(saved == writers * savesPerWriter, "Rill holds \(saved) of \(writers * savesPerWriter) items")
        return Double(writers * savesPerWriter) / seconds
    }

    /// Seconds for one thread a container of `writers` (a container may be listed more than
    /// once), each saving `count` `Item`s one by one with a context of its own; stops the
    /// benchmark when a save fails.
    static func timeSaves(_ writers: [ModelContainer], _ count: Int) -> Double {
        let failures = Lock<[String]>([])
        let seconds = timeThreads(writers.count) { writer in
            let context = ModelContext(writers[writer])
            do {
                for index in 0..<count {
                    context.insert(Item.random(writer * count + index))
                    try context.save()
                }
            } catch {
                failures.withLock { $0.append("writer \(writer): \(error)") }
            }
        }
        let problems = failures.withLock { $0 }
        precondition(problems.isEmpty, "Rill's concurrent saves failed: \(problems)")
        return seconds
    }

    /// The same saves through SQLite.
    func sqlite(writers: Int, path: String) -> Double {
        let setup = SQLitePeer(path: path, synchronous: .full)
        setup.execute(SQLitePeer.itemTable)
        let seconds = Self.timeThreads(writers) { writer in
            let connection = SQLitePeer(path: path, synchronous: .full)
            let insert = connection.prepare(SQLitePeer.insertItem)
            for index in 0..<savesPerWriter {
                insert.bind(Item.random(writer * savesPerWriter + index))
                insert.run()
            }
        }
        let count = setup.prepare("SELECT count(*) FROM item")
        precondition(count.step() && count.int(at: 0) == writers * savesPerWriter, "SQLite lost items")
        return Double(writers * savesPerWriter) / seconds
    }

    /// The same saves through SQLite, the threads taking turns on one connection (each insert
    /// its own transaction), as GRDB's `DatabaseQueue` and `DatabasePool` serialize writes.
    func sqliteSharingOneConnection(writers: Int, path: String) -> Double {
        let shared = SharedConnection(path: path)
        let seconds = Self.timeThreads(writers) { writer in
            for index in 0..<savesPerWriter { shared.insert(Item.random(writer * savesPerWriter + index)) }
        }
        let count = shared.connection.prepare("SELECT count(*) FROM item")
        precondition(count.step() && count.int(at: 0) == writers * savesPerWriter, "SQLite lost items")
        return Double(writers * savesPerWriter) / seconds
    }

    /// Runs `body(writer)` on `count` threads started together; the seconds until all are done.
    static func timeThreads(_ count: Int, _ body: @escaping @Sendable (Int) -> Void) -> Double {
        let ready = DispatchSemaphore(value: 0)
        let start = DispatchSemaphore(value: 0)
        let done = DispatchGroup()
        for writer in 0..<count {
            done.enter()
            Thread {
                ready.signal()
                start.wait()
                body(writer)
                done.leave()
            }.start()
        }
        for _ in 0..<count { ready.wait() }
        let begin = now()
        for _ in 0..<count { start.signal() }
        done.wait()
        return now() - begin
    }
}

/// One SQLite connection and its prepared insert, which threads use in turns.
///
/// `@unchecked Sendable`: the connection (opened `SQLITE_OPEN_NOMUTEX`) is only used under `turn`.
private final class SharedConnection: @unchecked Sendable {
    let connection: SQLitePeer
    private let statement: SQLitePeer.Statement
    private let turn = Lock(())

    init(path: String) {
        connection = SQLitePeer(path: path, synchronous: .full)
        connection.execute(SQLitePeer.itemTable)
        statement = connection.prepare(SQLitePeer.insertItem)
    }

    func insert(_ item: Item) {
        turn.withLock { _ in
            statement.bind(item)
            statement.run()
        }
    }
}

extension SQLitePeer {
    /// The save benchmark's `Item` as a table, keyed by its identifier's text: one b-tree
    /// (`WITHOUT ROWID`), as Rill keeps one database of records keyed by identifier.
    static let itemTable = """
        CREATE TABLE IF NOT EXISTS item (
            id TEXT PRIMARY KEY, name TEXT, category TEXT, quantity INTEGER, price REAL, inStock INTEGER
        ) WITHOUT ROWID
        """

    static let insertItem = "INSERT INTO item VALUES (?, ?, ?, ?, ?, ?)"
}

extension SQLitePeer.Statement {
    /// Binds an `Item` to the parameters of ``SQLitePeer/insertItem``.
    func bind(_ item: Item) {
        bind(item.id.uuidString, at: 1)
        bind(item.name, at: 2)
        bind(item.category, at: 3)
        bind(item.quantity, at: 4)
        bind(item.price, at: 5)
        bind(item.inStock ? 1 : 0, at: 6)
    }
}
