/// The results of a live query at one commit: an immutable collection of models.
///
/// Taking it from a ``LiveQuery`` costs nothing (it shares the query's storage), and it never
/// changes, so it can be read at leisure from any thread while the query moves on.
public struct LiveResults<Element: PersistentModel>: RandomAccessCollection, Sendable {
    private let rows: RowList
    private let range: Range<Int>
    /// Keeps alive the rows the query let go of since this snapshot was taken.
    private let version: LiveVersion
    /// The sequence number of the commit these results reflect (the store's last commit the
    /// query had applied when they were taken).
    public internal(set) var sequence: UInt64

    init(rows: RowList, range: Range<Int>, version: LiveVersion, sequence: UInt64) {
        self.rows = rows
        self.range = range
        self.version = version
        self.sequence = sequence
    }

    /// No results.
    init() {
        self.init(rows: RowList(), range: 0..<0, version: LiveVersion(), sequence: 0)
    }

    public var startIndex: Int { 0 }
    public var endIndex: Int { range.count }

    public subscript(position: Int) -> Element {
        precondition(position >= 0 && position < range.count, "LiveResults index out of range")
        return LiveRow<Element>.model(rows[range.lowerBound + position])
    }

    /// The identifier keys of the rows, in order.
    var keys: [[UInt8]] { range.map { rows[$0].key } }
}
