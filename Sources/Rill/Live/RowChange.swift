/// A change to a live query's window as the follower works it out: rows rather than elements.
///
/// It is not generic, so that the follower's work for a commit runs in code compiled once for
/// every model type; it becomes a ``ResultsChange`` of the query's element type when delivered,
/// on the observer's side.
struct RowChange: @unchecked Sendable {
    // Sendable: rows are immutable.
    var sequence: UInt64
    var removals: [(offset: Int, row: LiveEntry)] = []
    var insertions: [(offset: Int, row: LiveEntry)] = []
    /// Moves and updates hold the row before the commit (`old`) and after it (`row`): the old
    /// row is one the query let go of, kept alive by the change only until it is delivered.
    var moves: [(from: Int, to: Int, old: LiveEntry, row: LiveEntry)] = []
    var updates: [(oldOffset: Int, offset: Int, old: LiveEntry, row: LiveEntry)] = []

    init(sequence: UInt64) { self.sequence = sequence }

    var isEmpty: Bool { removals.isEmpty && insertions.isEmpty && moves.isEmpty && updates.isEmpty }

    /// The change with each row shown as `element` shows it.
    func results<Element>(_ element: (LiveEntry) -> Element) -> ResultsChange<Element> {
        ResultsChange(
            sequence: sequence,
            removals: removals.map { .init(offset: $0.offset, element: element($0.row)) },
            insertions: insertions.map { .init(offset: $0.offset, element: element($0.row)) },
            moves: moves.map { .init(from: $0.from, to: $0.to, oldElement: element($0.old), element: element($0.row)) },
            updates: updates.map {
                .init(oldOffset: $0.oldOffset, offset: $0.offset, oldElement: element($0.old), element: element($0.row))
            })
    }
}
