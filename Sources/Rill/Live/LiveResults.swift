/// The results of a live query at one commit: an immutable collection of models.
///
/// Taking it from a ``LiveQuery`` costs nothing (it shares the query's storage), and it never
/// changes, so it can be read at leisure from any thread while the query moves on.
public struct LiveResults<Element: PersistentModel>: RandomAccessCollection, Sendable {
    private let snapshot: RowSnapshot
    /// The sequence number of the commit these results reflect (the store's last commit the
    /// query had applied when they were taken).
    public let sequence: UInt64

    init(_ snapshot: RowSnapshot, sequence: UInt64) {
        self.snapshot = snapshot
        self.sequence = sequence
    }

    public var startIndex: Int { 0 }
    public var endIndex: Int { snapshot.count }

    public subscript(position: Int) -> Element {
        precondition(position >= 0 && position < snapshot.count, "LiveResults index out of range")
        return LiveRow<Element>.model(snapshot[position])
    }
}
