import Foundation

/// The live benchmark's baseline in SQLite: the same pieces in a table with the same indexes, and
/// the same range queries re-run after a commit, which is what GRDB's `ValueObservation` (and
/// SwiftData's `@Query`) do to keep results current.
final class SQLiteRequery {
    /// One of the benchmark's queries: scores in `low..<high`, in one of four orders, at most
    /// `limit` rows (nil: all).
    struct Shape {
        var low: Int
        var high: Int
        /// 0: by score; 1: by score, descending; 2: by group, then score; 3: unsorted.
        var order: Int
        var limit: Int?
    }

    private let database: SQLitePeer
    private let update: SQLitePeer.Statement
    private let selects: [SQLitePeer.Statement]

    /// Loads `pieces` into a new database at `path`. Its saves are not measured: `synchronous=NORMAL`.
    init(path: String, pieces: [Piece]) {
        let database = SQLitePeer(path: path, synchronous: .normal)
        self.database = database
        database.execute(
            """
            CREATE TABLE piece (id INTEGER PRIMARY KEY, score INTEGER, grp INTEGER, name TEXT);
            CREATE INDEX piece_score ON piece(score);
            CREATE INDEX piece_grp ON piece(grp);
            """)
        let insert = database.prepare("INSERT INTO piece VALUES (?, ?, ?, ?)")
        database.transaction {
            for piece in pieces {
                insert.bind(piece.id, at: 1)
                insert.bind(piece.score, at: 2)
                insert.bind(piece.group, at: 3)
                insert.bind(piece.name, at: 4)
                insert.run()
            }
        }
        database.execute("ANALYZE")
        update = database.prepare("UPDATE piece SET score = ? WHERE id = ?")
        let select = "SELECT id, score, grp, name FROM piece WHERE score >= ? AND score < ?"
        selects = ["ORDER BY score", "ORDER BY score DESC", "ORDER BY grp, score", ""].map {
            database.prepare("\(select) \($0) LIMIT ?")
        }
    }

    /// The same change as the benchmark's save: a piece gets a new score.
    func move(id: Int, to score: Int) {
        update.bind(score, at: 1)
        update.bind(id, at: 2)
        update.run()
    }

    /// Runs the query of `shape`, decoding every row into a `Piece` as a record type would; the rows.
    func fetch(_ shape: Shape) -> [Piece] {
        let select = selects[shape.order]
        select.bind(shape.low, at: 1)
        select.bind(shape.high, at: 2)
        // A negative limit is no limit.
        select.bind(shape.limit ?? -1, at: 3)
        var rows: [Piece] = []
        while select.step() {
            rows.append(
                Piece(
                    id: select.int(at: 0), score: select.int(at: 1), group: select.int(at: 2),
                    name: select.string(at: 3)))
        }
        select.reset()
        return rows
    }
}
