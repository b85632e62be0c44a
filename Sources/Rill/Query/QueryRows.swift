/// The rows a query keeps while its matches are read, and the window cut from them at the end:
/// the one place where typed fetches, text queries and the window meet.
///
/// - Matches that arrive in the query's order are the results as they come: the window's offset
///   is skipped, and reading stops once its limit is reached.
/// - Otherwise, with a window that ends early enough (offset + limit up to 10,000), only the best
///   rows are kept, by binary insertion (a bounded top-K), so memory follows the window, not the
///   matches; without one, every match is kept and sorted at the end.
struct QueryRows<Row> {
    let window: QueryWindow
    /// The query's order, its sort then identifier; nil when the rows arrive in it.
    private let precedes: ((Row, Row) -> Bool)?
    /// How many rows to keep at most, when rows are sorted while they are read.
    private let capacity: Int?
    /// The rows kept: the window already when rows arrive in order, else the best rows so far
    /// (in order when `capacity` is set).
    private(set) var rows: [Row] = []
    /// How many rows in order were passed over for the window's offset.
    private var skipped = 0

    /// Rows that arrive in the query's order.
    init(window: QueryWindow) {
        self.window = window
        precedes = nil
        capacity = nil
    }

    /// Rows that arrive in any order, to be put in `precedes`'s order.
    init(window: QueryWindow, ordering precedes: @escaping (Row, Row) -> Bool) {
        self.window = window
        self.precedes = precedes
        capacity = window.end.flatMap { $0 > 10_000 ? nil : $0 }
    }

    /// Whether another row can still be kept.
    var wantsMore: Bool {
        precedes != nil ? !window.isEmpty : window.keepsMore(afterKeeping: rows.count)
    }

    /// Keeps `row` if it may be among the results; false when no further row is wanted.
    ///
    /// Inlined: a typed fetch's rows are models of a type the fetch is not specialized for, and
    /// a call would look up the type of `QueryRows<T>` for every row.
    @inline(__always)
    mutating func add(_ row: Row) -> Bool {
        // Room for the window's rows at the first one (at most 1,024), not a doubling from one.
        if rows.capacity == 0 { rows.reserveCapacity(Swift.min(Swift.max(capacity ?? window.limit ?? 16, 1), 1_024)) }
        guard let precedes else {
            if skipped < window.offset {
                skipped += 1
                return true
            }
            rows.append(row)
            return window.keepsMore(afterKeeping: rows.count)
        }
        if let capacity {
            insert(row, keepingBest: capacity, by: precedes)
        } else {
            rows.append(row)
        }
        return true
    }

    /// Changes every row kept (how a typed fetch stops comparing rows by their order keys).
    mutating func updateEach(_ body: (inout Row) -> Void) {
        for index in rows.indices { body(&rows[index]) }
    }

    /// The rows of the window, in order.
    consuming func results() -> [Row] {
        guard let precedes else { return rows }
        if capacity == nil { rows.sort(by: precedes) }
        let range = window.range(in: rows.count)
        return range.count == rows.count ? rows : Array(rows[range])
    }

    /// Inserts `row` into the sorted `rows` (at most `capacity` long) where it belongs, dropping
    /// the row that falls off the end.
    private mutating func insert(_ row: Row, keepingBest capacity: Int, by precedes: (Row, Row) -> Bool) {
        if rows.count == capacity, let last = rows.last, !precedes(row, last) { return }
        var low = 0
        var high = rows.count
        while low < high {
            let middle = (low + high) / 2
            if precedes(row, rows[middle]) { high = middle } else { low = middle + 1 }
        }
        rows.insert(row, at: low)
        if rows.count > capacity { rows.removeLast() }
    }
}
