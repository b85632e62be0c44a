import Foundation
import Rill

extension QueryBenchmark {
    /// An indexed query's rates through Rill's text language (measure 0), `#Predicate` (1),
    /// SQLite (2) and `#Predicate` fetching a model that reads its record (3), its row count for
    /// the first argument, and the rate of its text forced to a full scan.
    struct IndexedQuery {
        /// Measures 0 (text), 1 (`#Predicate`), 2 (SQLite), 3 (`#Predicate`, `init(record:)`)
        /// and, when given, 4 (raw LMDB).
        var rates: InterleavedRates
        var rows: Int
        var forcedScan: Double
    }

    /// Runs one indexed query through Rill's text language, through `#Predicate` and through
    /// SQLite, each for `seconds` a round over `arguments` from the first, in interleaved rounds;
    /// then its text once forced to a full scan. Stops the benchmark when the sides' row counts
    /// for an argument differ.
    ///
    /// - Parameters:
    ///   - text: the query in Rill's text language, parsed for every run.
    ///   - typed: the query as a `FetchDescriptor`, built anew for every run (its translation
    ///     prepared once for its form, its plan made every time).
    ///   - reading: the same query of `RecordEntry`, whose models read their records themselves.
    ///   - peer: SQLite's prepared statement bound to the argument; returns its row count.
    ///   - raw: the same reads through LMDB's C API: the walk of the index for each argument, made
    ///     beforehand (so that the measure holds no encoding), and the copy they read.
    func compare<Argument>(
        _ name: String, _ arguments: [Argument], store: Store, context: ModelContext,
        text: (Argument) -> String, typed: (Argument) -> FetchDescriptor<Entry>,
        reading: (Argument) -> FetchDescriptor<RecordEntry>, peer: (Argument) -> Int,
        raw: RawIndexedGets? = nil, probe: (Argument) -> RawIndexedGets.Probe = { _ in fatalError() }
    ) throws -> IndexedQuery {
        let probes = raw == nil ? [] : arguments.map(probe)
        var rows = [[Int]](repeating: [Int](repeating: -1, count: arguments.count), count: 5)
        let rates = try InterleavedRates.collect(rounds: rounds, measures: raw == nil ? 4 : 5) { side in
            switch side {
            case 0:
                return try Self.rate(over: arguments, seconds: seconds, rows: &rows[0]) {
                    try store.run(QueryParser.parse(text($0))).count
                }
            case 1:
                return try Self.rate(over: arguments, seconds: seconds, rows: &rows[1]) {
                    try context.fetch(typed($0)).count
                }
            case 2:
                return Self.rate(over: arguments, seconds: seconds, rows: &rows[2], peer)
            case 3:
                return try Self.rate(over: arguments, seconds: seconds, rows: &rows[3]) {
                    try context.fetch(reading($0)).count
                }
            default:
                return Self.rate(over: probes, seconds: seconds, rows: &rows[4]) { raw!.rows(of: $0) }
            }
        }
        Self.check(
            name,
            [("text", rows[0]), ("#Predicate", rows[1]), ("SQLite", rows[2]), ("init(record:)", rows[3])]
                + (raw == nil ? [] : [("raw LMDB", rows[4])]))
        var scanned = [Int](repeating: -1, count: arguments.count)
        let forcedScan = try Self.rate(over: arguments, seconds: 0, rows: &scanned) {
            try store.run(QueryParser.parse(text($0)), forceScan: true).count
        }
        Self.check(name + ", forced to a full scan", [("text", rows[0]), ("text forced to a full scan", scanned)])
        return IndexedQuery(rates: rates, rows: rows[0][0], forcedScan: forcedScan)
    }

    /// Rill's measures of an indexed query and their names in the tables.
    static let rillSides = [(0, "text"), (1, "#Predicate"), (3, "#Predicate, init(record:)")]

    /// Runs `query` over `arguments` in order, from the first (wrapping around), for at least
    /// `seconds` and at least once; returns the queries per second, and leaves the row count of
    /// each argument it ran in `rows`.
    static func rate<Argument>(
        over arguments: [Argument], seconds: Double, rows: inout [Int], _ query: (Argument) throws -> Int
    ) rethrows -> Double {
        var count = 0
        let start = now()
        var elapsed = 0.0
        repeat {
            let index = count % arguments.count
            rows[index] = try query(arguments[index])
            count += 1
            elapsed = now() - start
        } while elapsed < seconds
        return Double(count) / elapsed
    }

    /// Prints the sides' row counts over the arguments every side ran (-1: not run), or stops the
    /// benchmark with a message at the first argument for which they differ: a peer returning
    /// other rows measures another query.
    static func check(_ query: String, _ sides: [(name: String, rows: [Int])]) {
        var totals = [Int](repeating: 0, count: sides.count)
        var compared = 0
        for argument in sides[0].rows.indices {
            let counts = sides.map { $0.rows[argument] }
            if counts.contains(-1) { continue }
            guard Set(counts).count == 1 else {
                let found = zip(sides, counts).map { "\($0.name) \($1)" }.joined(separator: ", ")
                FileHandle.standardError.write(
                    Data("rill-bench query: \(query), argument \(argument): rows \(found); they must agree\n".utf8))
                exit(1)
            }
            compared += 1
            for side in totals.indices { totals[side] += counts[side] }
        }
        precondition(compared > 0, "\(query): no argument that every side ran")
        let found = zip(sides, totals).map { "\($0.name) \($1)" }.joined(separator: ", ")
        let arguments = compared == 1 ? "the 1 argument" : "each of the \(compared) arguments"
        print("rows of \(query): the same for \(arguments) every side ran (in all: \(found))")
    }
}
