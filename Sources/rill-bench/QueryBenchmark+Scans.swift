import CLMDB
import Foundation
import Rill

extension QueryBenchmark {
    /// The full scans' rows of the tables beside SQLite and beside raw LMDB, and a line with
    /// SQLite's own scans beside raw LMDB.
    struct ScanRows {
        var besideSQLite: [ComparisonTable.Row]
        var besideRaw: [ComparisonTable.Row]
        var sqliteBesideRaw: String
    }

    /// Full scans in interleaved rounds: `name contains "99999"` through Rill's text language
    /// (measure 0), `#Predicate` (1) and SQLite's `instr` (2); `amount > 99990.0` through Rill's
    /// text forced to a scan (3) and SQLite `NOT INDEXED` (4); and a raw LMDB cursor walk of the
    /// same records (5), the storage's limit.
    ///
    /// `raw` is an exact copy of Rill's store (see `loadRaw`). No `#Predicate` row for the
    /// numeric scan: a fetch cannot be forced past the index on `amount`.
    func scan(store: Store, context: ModelContext, table: EntryTable, raw: RawLMDB) throws -> ScanRows {
        let needle = "99999"
        let contains = "Entry where name contains \"\(needle)\""
        // About one record in 10,000 is above: the scan is measured, not the reading of matches.
        let threshold = 99_990.0
        let above = "Entry where amount > \(threshold)"
        let recordsDatabase = "records:\(Entry.entityName)"
        let records = self.records

        // The walk sums the values' sizes, so that it is not optimized away; it decodes nothing.
        func walk() -> Int {
            var bytes = 0
            var count = 0
            raw.forEach(in: recordsDatabase) { _, value in
                bytes &+= value.count
                count += 1
            }
            precondition(bytes > 0)
            return count
        }
        func pass(_ index: Int) throws -> Int {
            switch index {
            case 0: return try store.run(QueryParser.parse(contains), forceScan: true).count
            case 1:
                return try context.fetch(FetchDescriptor<Entry>(predicate: #Predicate { $0.name.contains(needle) }))
                    .count
            case 2: return table.entries(nameContaining: needle)
            case 3: return try store.run(QueryParser.parse(above), forceScan: true).count
            case 4: return table.scannedEntries(above: threshold)
            default: return walk()
            }
        }

        // One untimed pass of each first: no side pays for first touching its map.
        for index in 0..<6 { _ = try pass(index) }
        var rows = [Int](repeating: -1, count: 6)
        let rates = try InterleavedRates.collect(rounds: rounds, measures: 6) { index in
            var passes = 0
            let start = now()
            var elapsed = 0.0
            repeat {
                rows[index] = try pass(index)
                passes += 1
                elapsed = now() - start
            } while elapsed < 0.3
            return Double(records * passes) / elapsed
        }
        Self.check(contains, [("text", [rows[0]]), ("#Predicate", [rows[1]]), ("SQLite instr", [rows[2]])])
        Self.check(above, [("text forced to a full scan", [rows[3]]), ("SQLite NOT INDEXED", [rows[4]])])
        precondition(rows[5] == records, "the raw walk met \(rows[5]) records, not \(records)")

        func row(_ name: String, _ index: Int, beside baseline: Int, target: String) -> ComparisonTable.Row {
            ComparisonTable.Row(
                name: name, rill: rates.median(index), baseline: rates.median(baseline), unit: "records/s",
                higherIsBetter: true, target: target, ratio: rates.ratio(index, to: baseline))
        }
        let containsName = "full scan, name contains \"\(needle)\", \(rows[0]) matches"
        let aboveName = "full scan, amount > \(threshold), \(rows[3]) matches, text forced to a scan"
        return ScanRows(
            besideSQLite: [
                row("\(containsName), text (SQLite instr)", 0, beside: 2, target: "≥ 1.00×"),
                row("\(containsName), #Predicate (SQLite instr)", 1, beside: 2, target: "≥ 1.00×"),
                row("\(aboveName) (SQLite NOT INDEXED)", 3, beside: 4, target: "≥ 1.00×"),
            ],
            besideRaw: [
                row("\(containsName), text (raw: cursor walk)", 0, beside: 5, target: "≥ 0.25×"),
                row("\(containsName), #Predicate (raw: cursor walk)", 1, beside: 5, target: "≥ 0.25×"),
                row("\(aboveName) (raw: cursor walk)", 3, beside: 5, target: "≥ 0.30×"),
            ],
            sqliteBesideRaw: String(
                format: "SQLite's scans beside the same raw walk: instr %.2f×, NOT INDEXED amount > %.1f %.2f×",
                rates.ratio(2, to: 5), threshold, rates.ratio(4, to: 5)))
    }
}
