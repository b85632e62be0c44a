/// How a live query's results changed with one commit of the log.
///
/// Offsets are positions in the results (the window of `fetchOffset` / `fetchLimit`, when the
/// descriptor has one): removals and move sources count in the results before the change,
/// insertions, move destinations and updates in the results after it. Applying the change — remove
/// at `removals` and every move's `from`, from the highest offset down; insert at `insertions` and
/// every move's `to`, from the lowest offset up; then replace the elements at `updates` — turns
/// the previous results into exactly the new ones. ``apply(to:)->_`` does that (``apply(to:)->()`` in place),
/// and ``difference(from:)`` gives the same as a `CollectionDifference`.
///
/// Removals carry the element as it was; insertions the element as it is now; moves and updates
/// both, `oldElement` and `element`, so that an observer can tell what changed in a row without
/// keeping a copy of the results. Only the delivered change holds the old elements: a live query
/// keeps one copy of its rows.
///
/// For example, keeping a copy of a live query's results up to date:
///
/// ```swift
/// var titles = Array(books)
/// let observation = books.observe(on: .main) { change in
///     titles = change.apply(to: titles)
/// }
/// ```
public struct ResultsChange<Element: Sendable>: Sendable {
    /// The sequence number of the commit the new results reflect.
    public var sequence: UInt64
    /// Elements that left the results, at their old offsets, ascending.
    public var removals: [Removal]
    /// Elements that entered the results, at their new offsets, ascending.
    public var insertions: [Insertion]
    /// Elements that stayed in the results but changed position relative to the others, ascending by `to`.
    public var moves: [Move]
    /// Elements that stayed in place but whose record changed, ascending by offset, each before and after.
    public var updates: [Update]

    /// A change of its parts (the service layer reads changes back from the wire).
    package init(sequence: UInt64, removals: [Removal], insertions: [Insertion], moves: [Move], updates: [Update]) {
        self.sequence = sequence
        self.removals = removals
        self.insertions = insertions
        self.moves = moves
        self.updates = updates
    }

    /// An element that left the results.
    public struct Removal: Sendable {
        /// Its offset in the previous results.
        public var offset: Int
        /// The element as it was.
        public var element: Element

        package init(offset: Int, element: Element) {
            self.offset = offset
            self.element = element
        }
    }

    /// An element that entered the results.
    public struct Insertion: Sendable {
        /// Its offset in the new results.
        public var offset: Int
        /// The element as it is now.
        public var element: Element

        package init(offset: Int, element: Element) {
            self.offset = offset
            self.element = element
        }
    }

    /// An element that moved (its record changed in a way that reordered it, or a descriptor change did).
    ///
    /// It carries the element before and after the commit, as an ``Update`` does: a commit's
    /// moves are rows whose record changed (a descriptor change's moves are rows whose record did
    /// not, and `oldElement` then equals `element`).
    public struct Move: Sendable {
        /// Its offset in the previous results.
        public var from: Int
        /// Its offset in the new results.
        public var to: Int
        /// The element as it was before the commit: the one at `from` in the previous results.
        public var oldElement: Element
        /// The element as it is now: the one at `to` in the new results.
        public var element: Element

        package init(from: Int, to: Int, oldElement: Element, element: Element) {
            self.from = from
            self.to = to
            self.oldElement = oldElement
            self.element = element
        }
    }

    /// An element whose record changed without moving it: compare `oldElement` with `element`
    /// to tell what changed.
    ///
    /// For example, the titles a commit changed:
    ///
    /// ```swift
    /// for update in change.updates where update.oldElement.title != update.element.title {
    ///     print("\(update.oldElement.title) → \(update.element.title)")
    /// }
    /// ```
    public struct Update: Sendable {
        /// Its offset in the previous results.
        public var oldOffset: Int
        /// Its offset in the new results.
        public var offset: Int
        /// The element as it was before the commit: the one at `oldOffset` in the previous results.
        public var oldElement: Element
        /// The element as it is now: the one at `offset` in the new results.
        public var element: Element

        package init(oldOffset: Int, offset: Int, oldElement: Element, element: Element) {
            self.oldOffset = oldOffset
            self.offset = offset
            self.oldElement = oldElement
            self.element = element
        }
    }

    /// True when the change changes nothing (live queries never deliver such a change).
    public var isEmpty: Bool { removals.isEmpty && insertions.isEmpty && moves.isEmpty && updates.isEmpty }

    /// `previous` with the change applied: the results after the commit.
    ///
    /// - Precondition: `previous` holds the results the change was computed from.
    public func apply<C: RangeReplaceableCollection>(to previous: C) -> C
    where C.Element == Element, C.Index == Int {
        var result = Array(previous)
        apply(to: &result)
        return C(result)
    }

    /// Applies the change to `results` in place: the results after the commit. It costs the
    /// change's size times the shifts of the elements after each changed offset, and copies
    /// nothing when `results` is not shared.
    ///
    /// - Precondition: `results` holds the results the change was computed from.
    public func apply(to results: inout [Element]) {
        var removed = removals.map { $0.offset } + moves.map { $0.from }
        removed.sort(by: >)
        for offset in removed { results.remove(at: offset) }
        var inserted = insertions.map { ($0.offset, $0.element) } + moves.map { ($0.to, $0.element) }
        inserted.sort { $0.0 < $1.0 }
        for (offset, element) in inserted { results.insert(element, at: offset) }
        for update in updates { results[update.offset] = update.element }
    }

    /// The change as a `CollectionDifference`: a removal and an insertion for each element that
    /// left or entered, an associated pair for each move, and a removal and insertion at the same
    /// place for each update. Applying it with `previous.applying(difference)` gives the new results.
    ///
    /// `previous` provides the old elements of moved and updated rows.
    public func difference<C: Collection>(from previous: C) -> CollectionDifference<Element>
    where C.Element == Element, C.Index == Int {
        var changes: [CollectionDifference<Element>.Change] = []
        for removal in removals {
            changes.append(.remove(offset: removal.offset, element: removal.element, associatedWith: nil))
        }
        for insertion in insertions {
            changes.append(.insert(offset: insertion.offset, element: insertion.element, associatedWith: nil))
        }
        for move in moves {
            changes.append(.remove(offset: move.from, element: previous[move.from], associatedWith: move.to))
            changes.append(.insert(offset: move.to, element: move.element, associatedWith: move.from))
        }
        for update in updates {
            changes.append(.remove(offset: update.oldOffset, element: previous[update.oldOffset], associatedWith: nil))
            changes.append(.insert(offset: update.offset, element: update.element, associatedWith: nil))
        }
        // Valid by construction: removal offsets are distinct, and so are insertion offsets.
        return CollectionDifference(changes)!
    }
}

extension ResultsChange: CustomStringConvertible {
    public var description: String {
        var parts: [String] = []
        if !removals.isEmpty { parts.append("removed \(removals.map(\.offset))") }
        if !insertions.isEmpty { parts.append("inserted \(insertions.map(\.offset))") }
        if !moves.isEmpty { parts.append("moved \(moves.map { "\($0.from)→\($0.to)" })") }
        if !updates.isEmpty { parts.append("updated \(updates.map(\.offset))") }
        return "ResultsChange(#\(sequence): \(parts.isEmpty ? "nothing" : parts.joined(separator: ", ")))"
    }
}
