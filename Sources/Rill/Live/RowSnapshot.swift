/// A maintained query's window at one commit: the rows it shows, kept alive as long as needed.
/// (The commit it reflects is the follower's to tell: see `LogFollower.publishedSequence`.)
struct RowSnapshot: @unchecked Sendable {
    // Sendable: the row list's chunks are never changed once shared, the rows are immutable.
    let rows: RowList
    let range: Range<Int>
    /// Keeps alive the rows the query let go of since this snapshot was taken.
    let version: LiveVersion

    /// No rows.
    static var empty: RowSnapshot { RowSnapshot(rows: RowList(), range: 0..<0, version: LiveVersion()) }

    var count: Int { range.count }

    subscript(position: Int) -> LiveEntry { rows[range.lowerBound + position] }

    /// The identifier keys of the rows, in order.
    var keys: [[UInt8]] { range.map { rows[$0].key } }

    /// The rows in order, as `transform` makes them.
    func map<Element>(_ transform: (LiveEntry) throws -> Element) rethrows -> [Element] {
        try range.map { try transform(rows[$0]) }
    }
}
