import CPrefetch
import Foundation

/// A live query as the follower maintains it: the first rows of its matches, in order, kept
/// exact commit by commit without running the query again.
///
/// It holds the rows up to the end of the descriptor's window plus some look-ahead (all matches
/// when there is no limit). A change to a record finds the record's old and new positions by
/// binary search; a deletion inside the window takes the next held row, and only when the
/// look-ahead runs out are rows read from the store again (an amortized cost). The change to the
/// window is worked out from the changed records and the rows near the window's edges, so a
/// commit costs a query work in proportion to the records it changed, not to the results.
///
/// Owned by the follower's thread.
final class MaintainedQuery<Source: LiveRowSource> {
    /// What the rows are and how they are chosen and ordered.
    var source: Source { sourceBox.value }
    /// The source, in a box: read in place on the paths every change takes, never copied.
    private var sourceBox: SourceBox<Source>
    /// The first `rows.count` matches, in order.
    private(set) var rows = RowList()
    /// The held rows by identifier key (their owner).
    private let held = HeldRows()
    /// Where rows the query lets go of are kept until no snapshot can show them.
    private var version = LiveVersion()
    /// The follower's first test of a change of a record the query does not hold.
    let screen = ChangeScreen()
    /// The follower's table of which queries hold which records, and this query's number in it.
    private var holders: (index: HolderIndex, id: Int32)?
    /// True when `rows` holds every match.
    private var complete = true
    /// The source's, kept at hand.
    private var hasFilter = false
    private var orderPaths: [QuerySortKey]?
    /// The source's `comparator`, `relationshipSlot` and `filter`, kept at hand: reading them
    /// from the source on the paths every change takes copied the whole source.
    private var compareRows: (LiveEntry, LiveEntry) -> ComparisonResult = { _, _ in .orderedSame }
    private var relationshipSlot: RelationshipSlot?
    private var filter: QueryNode?

    init(_ source: Source) {
        self.sourceBox = SourceBox(source)
        configure()
    }

    /// The store's shared rows, once loaded: told of the rows let go of, which it may then free.
    private var sharedRows: SharedRows?

    deinit {
        // Snapshots taken before may still show the held rows and the chunks of the list.
        sharedRows?.noteReleased(held.count)
        version.retired.append(contentsOf: held.removeAll())
        rows.retireAll(into: version)
    }

    private func configure() {
        let source = sourceBox.value
        screen.reset(dependencies: source.dependencies, filter: source.filter, necessary: source.necessaryCondition)
        filter = source.filter
        hasFilter = filter != nil
        orderPaths = source.orderPaths
        compareRows = source.comparator
        relationshipSlot = source.relationshipSlot
        window = QueryWindow(offset: source.offset, limit: source.limit)
    }

    // MARK: - Held rows

    /// Joins the follower's table of holders: every held row is entered there from now on.
    func attach(to index: HolderIndex, id: Int32) {
        holders = (index, id)
        index.add(held, id)
    }

    /// Leaves the follower's table of holders.
    func detach() {
        if let (index, id) = holders {
            index.remove(held, id)
        }
        holders = nil
    }

    private func hold(_ row: LiveEntry) {
        held.insert(row)
        if let (index, id) = holders { index.add(row.key, id) }
    }

    /// Stops holding the row with `key`: it is retired, and returned.
    @discardableResult
    private func letGo(_ key: [UInt8]) -> LiveEntry? {
        guard let row = held.remove(key) else { return nil }
        if let (index, id) = holders { index.remove(key, id) }
        retire(row)
        return row
    }

    /// The order key of a row whose record is `record`; nil when rows are compared by model.
    private func orderKey(_ record: RecordValue, key: [UInt8]) throws -> [UInt8]? {
        guard let orderPaths else { return nil }
        do {
            return try OrderKey.make(record, key: key, sort: orderPaths)
        } catch {
            let paths = orderPaths.map { $0.path.joined(separator: ".") }.joined(separator: ", ")
            throw RillError(
                .queryFailed, "cannot order \(source.entityName) by \(paths): \(error)", underlyingError: error)
        }
    }

    // MARK: - The window

    /// Which of the matches are the results.
    private var window = QueryWindow(offset: nil, limit: nil)

    /// The offset of the window's first row among the matches.
    var windowStart: Int { window.offset }

    /// The offset just past the window; nil without a limit.
    var windowEnd: Int? { window.end }

    /// How many rows past the window are kept, so that deletions rarely need the store. Held
    /// rows run to the window's end plus the look-ahead, a sum that `QueryWindow` saturates.
    private var lookahead: Int { windowEnd.map { max(16, $0 / 4) } ?? 0 }

    /// The results as they are now: a snapshot of the window's rows.
    func results() -> RowSnapshot {
        let range = window.range(in: rows.count)
        // Rows let go of from now on stay alive as long as this snapshot.
        let next = LiveVersion()
        version.next = next
        version = next
        return RowSnapshot(rows: rows.share(), range: range, version: next)
    }

    /// Lets go of a row: it lives on while a snapshot taken before may show it.
    private func retire(_ row: LiveEntry) {
        version.retired.append(row)
    }

    // MARK: - Loading

    /// Reads the first rows from the store as of the transaction's snapshot.
    func load(in transaction: StoreSnapshot, store: Store) throws {
        sharedRows = store.sharedRows
        let slot = relationshipSlot
        slot?.loader = RelationshipLoader(store: store, snapshot: transaction)
        defer { slot?.loader = nil }
        let target = window.end(plus: lookahead)
        let loaded = try fetch(limit: target, in: transaction, store: store)
        complete = target.map { loaded.count < $0 } ?? true
        replaceRows(with: loaded)
    }

    /// Loads the results as they were before `context`'s batch of commits (the transaction sees
    /// the batch's last one): the window and its look-ahead only, as a live query holds them, for
    /// a query read as of then or then applied commit by commit (a refill at one of the batch's
    /// commits reads the store at the snapshot and corrects for the later commits, see
    /// `CommitContext`).
    ///
    /// The store gives the current first matches, one more for each record the batch changed;
    /// those records' rows are taken out and put back as they were before the batch (read from
    /// the batch's records before). A row of a record the batch left alone is where it was, so
    /// when the store's matches were cut, every match up to the last one given is known: the
    /// rows are cut there, which keeps at least the window.
    func loadWindow(before context: CommitContext) throws {
        let slot = relationshipSlot
        // Related models are read as they were before the batch too.
        let before = CommitContext(
            store: context.store, transaction: context.transaction, entries: context.entries, index: -1,
            snapshot: context.snapshot)
        let loader = RelationshipLoader(store: context.store, snapshot: context.transaction, commit: before)
        slot?.loader = loader
        defer { slot?.loader = nil }
        var changed: Set<[UInt8]> = []
        for entry in context.entries {
            for change in entry.changes where change.entity == source.entityName { changed.insert(change.key) }
        }
        let lookahead = self.lookahead
        let limit = window.end(
            plus: lookahead.addingReportingOverflow(changed.count).overflow ? .max : lookahead + changed.count)
        var loaded = try RelationshipLoader.$reading.withValue(RelationshipLoader.Reading(loader)) {
            try fetch(limit: limit, in: context.transaction, store: context.store)
        }
        let cut = limit.map { loaded.count >= $0 } ?? false
        let last = cut ? loaded.last : nil
        if !changed.isEmpty {
            try correct(
                &loaded, keys: changed, records: context.recordsBeforeBatch(of: source.entityName, keys: changed))
        }
        if let last, let end = loaded.firstIndex(where: { precedes(last, $0) }) {
            loaded.removeSubrange(end...)
        }
        complete = !cut
        replaceRows(with: loaded)
    }

    /// Replaces the source and loads the new results; returns the change from the old window
    /// to the new one (nil when they are the same).
    func replaceSource(
        _ newSource: Source, sequence: UInt64, in transaction: StoreSnapshot, store: Store
    ) throws -> ResultsChange<Source.Element>? {
        let previous = results()
        let before = previous.map(Source.element)
        let beforeKeys = previous.keys
        sourceBox = SourceBox(newSource)
        configure()
        try load(in: transaction, store: store)
        let after = results()
        let change = ResultsDiff.between(
            old: beforeKeys, oldModels: before, new: after.keys, newModels: after.map(Source.element),
            sequence: sequence)
        return change.isEmpty ? nil : change
    }

    private func replaceRows(with loaded: [LiveEntry]) {
        sharedRows?.noteReleased(held.count)
        let released = held.removeAll()
        if let (index, id) = holders { index.remove(released.lazy.map(\.key), id) }
        version.retired.append(contentsOf: released)
        rows.retireAll(into: version)
        rows = RowList(loaded)
        // Room for a sixteenth more, so that the first rows commits add do not make the table
        // grow at once (a pass over every row held, a commit's cost).
        held.reserveCapacity(loaded.count + loaded.count / 16)
        // The rows were read a while ago, out of order: each row and its key are asked for a few
        // rows ahead of being entered, instead of each waiting for its cache miss in turn.
        loaded.withUnsafeBufferPointer { rows in
            for index in rows.indices {
                let keyAhead = index + 4
                if keyAhead < rows.count {
                    withUnsafeBytes(of: rows[keyAhead].key) { rill_prefetch($0.load(as: UnsafeRawPointer.self)) }
                }
                let ahead = index + 8
                if ahead < rows.count { rill_prefetch(Unmanaged.passUnretained(rows[ahead]).toOpaque()) }
                hold(rows[index])
            }
        }
    }

    /// The first `limit` matches as of the transaction's snapshot.
    private func fetch(limit: Int?, in transaction: StoreSnapshot, store: Store) throws -> [LiveEntry] {
        try source.fetch(limit: limit, in: transaction, store: store) { record, key in try orderKey(record, key: key) }
    }

    // MARK: - Applying a commit

    /// Applies the changes one commit made to the entity's records — those of records the query
    /// holds, and inserts and updates its `screen` admits — and returns the change to the
    /// results, or nil when they are as they were.
    func apply(_ changes: [DecodedChange], commit: CommitContext) throws -> RowChange? {
        let slot = relationshipSlot
        slot?.loader = RelationshipLoader(store: commit.store, snapshot: commit.transaction, commit: commit)
        defer { slot?.loader = nil }
        // The changes that can affect the held rows: a held record changed or deleted, or a
        // record that matches now. The follower hands a query only the changes of records it
        // holds or that its screen admits, so that screen is not run again here.
        var relevant: [(key: [UInt8], row: LiveEntry?)] = []
        // A record the commit changes twice: the later change matters if the earlier one did
        // (its row may be held by the time the later one applies).
        var earlier: Set<[UInt8]> = []
        for decoded in changes {
            let key = decoded.key
            let wasHeld = held[key] != nil || (!earlier.isEmpty && earlier.contains(key))
            defer { if changes.count > 1, relevant.last?.key == key { earlier.insert(key) } }
            switch decoded.kind {
            case .delete:
                if wasHeld { relevant.append((key, nil)) }
            case .update, .insert:
                let row = try matchingRow(decoded)
                if row == nil, !wasHeld { continue }
                // A related record changed, not this one: only its entering or leaving matters.
                if decoded.isRelated, row != nil, wasHeld { continue }
                relevant.append((key, row))
            }
        }
        guard !relevant.isEmpty else { return nil }
        if relevant.count == 1, window.keepsEverything {
            return applyOne(key: relevant[0].key, row: relevant[0].row, sequence: commit.sequence)
        }

        let before = rows.share()
        var oldRows: [RecordKey: LiveEntry] = [:]
        for (key, row) in relevant {
            if let old = letGo(key) {
                if oldRows[RecordKey(key)] == nil { oldRows[RecordKey(key)] = old }
                if let position = position(of: old, in: rows) { rows.remove(at: position, retiring: version) }
            }
            if let row, complete || (rows.last.map { precedes(row, $0) } ?? false) {
                rows.insert(row, at: rows.partitionPoint(before: row, isBefore: isBefore(row)), retiring: version)
                hold(row)
            }
        }
        if !complete, let end = windowEnd, rows.count < end {
            try refill(lookahead: lookahead, commit: commit)
        } else if let extent = window.end(plus: 2 * lookahead), rows.count > extent {
            let keep = window.end(plus: lookahead) ?? extent
            for position in keep..<rows.count { letGo(rows[position].key) }
            rows.truncate(to: keep, retiring: version)
            complete = false
        }
        if let end = windowEnd, !touchesWindow(end: end, before: before, relevant: relevant, oldRows: oldRows) {
            return nil
        }
        let change = windowChange(
            from: before, touched: relevant.map { $0.key }, oldRows: oldRows, sequence: commit.sequence)
        return change.isEmpty ? nil : change
    }

    /// Whether a changed record's row was or is among the first `end` rows, the window's end:
    /// when none was and none is, the window is what it was, and the change to it is none.
    ///
    /// The rows that did not change keep their order, and none of them left the first `end`
    /// of either list: rows are refilled only when fewer than `end` remain, which a removal
    /// past `end` cannot cause, and let go only past the look-ahead, after `end`. So the first
    /// `end` rows before and after are the same rows. This is the common case of a query with
    /// a limit: most changes to its matches fall past the window, or past the rows it holds.
    private func touchesWindow(
        end: Int, before: RowList, relevant: [(key: [UInt8], row: LiveEntry?)], oldRows: [RecordKey: LiveEntry]
    ) -> Bool {
        for (key, _) in relevant {
            if let old = oldRows[RecordKey(key)], let position = position(of: old, in: before), position < end {
                return true
            }
            if let new = held[key], let position = position(of: new, in: rows), position < end { return true }
        }
        return false
    }

    /// `apply` for the most common case: one record changed, and the query has no window (it
    /// holds every match). The record's row left, entered, stayed in place or moved; no other
    /// row can enter or leave, and the positions found on the way are the change's offsets.
    private func applyOne(key: [UInt8], row: LiveEntry?, sequence: UInt64) -> RowChange? {
        let old = held[key]
        let oldPosition = old.flatMap { position(of: $0, in: rows) }
        if let oldPosition { rows.remove(at: oldPosition, retiring: version) }
        var newPosition: Int?
        if let row {
            let position = rows.partitionPoint(before: row, isBefore: isBefore(row))
            rows.insert(row, at: position, retiring: version)
            newPosition = position
        }
        switch (old, row) {
        case (let old?, let row?):
            // Still held: the table of holders stays as it is.
            held.insert(row)
            retire(old)
        case (.some, nil): letGo(key)
        case (nil, let row?): hold(row)
        case (nil, nil): break
        }
        var change = RowChange(sequence: sequence)
        switch (oldPosition, newPosition) {
        case (let from?, nil):
            change.removals = [(from, old!)]
        case (nil, let to?):
            change.insertions = [(to, row!)]
        case (let from?, let to?) where from == to:
            change.updates = [(from, to, old!, row!)]
        case (let from?, let to?):
            change.moves = [(from, to, old!, row!)]
        case (nil, nil):
            return nil
        }
        return change
    }

    /// The row of a changed record when it matches the predicate, else nil.
    private func matchingRow(_ decoded: DecodedChange) throws -> LiveEntry? {
        let key = decoded.key
        // The filter is the predicate's complete, exact translation: it decides alone.
        if screen.decidesFilter {
            guard try screen.conditionsHold(for: decoded) else { return nil }
        } else if let filter {
            guard let value = try decoded.recordValue(), QueryEvaluator.matches(filter, value) else { return nil }
        }
        return try sourceBox.row(for: decoded, filtered: hasFilter) { try orderKey($0, key: key) }
    }

    /// Reads the matches up to the window's end plus `lookahead` as of the current commit, when
    /// the held rows ran short (of a window with a limit).
    ///
    /// The transaction sees the batch's last commit, which may be later than the current one:
    /// rows of records that later commits changed are taken out of what the store gives, and put
    /// back as they were at the current commit.
    private func refill(lookahead: Int, commit: CommitContext) throws {
        let later = try commit.keysChangedLater(in: source.entityName)
        guard let target = window.end(plus: lookahead), let wanted = window.end(plus: lookahead + later.count) else {
            return
        }
        var loaded = try fetch(limit: wanted, in: commit.transaction, store: commit.store)
        let reachedEnd = loaded.count < wanted
        if !later.isEmpty {
            try correct(&loaded, keys: later, records: commit.records(of: source.entityName, keys: later))
        }
        complete = reachedEnd && loaded.count <= target
        replaceRows(with: Array(loaded.prefix(target)))
    }

    /// Rows read at a later snapshot, corrected: the rows of `keys` are replaced by those of
    /// `records` (their versions at the commit wanted; a key absent did not exist then), in order.
    private func correct(_ loaded: inout [LiveEntry], keys: Set<[UInt8]>, records: [[UInt8]: [UInt8]]) throws {
        loaded.removeAll { keys.contains($0.key) }
        for (key, record) in records {
            guard let row = try source.row(record: record, key: key, order: { try orderKey($0, key: key) })
            else { continue }
            loaded.append(row)
        }
        loaded.sort(by: precedes)
    }

    // MARK: - Order

    /// The descriptor's order: its sort descriptors, then the identifier key.
    func precedes(_ lhs: LiveEntry, _ rhs: LiveEntry) -> Bool {
        if let left = lhs.order, let right = rhs.order { return OrderKey.precedes(left, right) }
        switch compareRows(lhs, rhs) {
        case .orderedAscending: return true
        case .orderedDescending: return false
        case .orderedSame: return lhs.key.lexicographicallyPrecedes(rhs.key)
        }
    }

    /// `precedes(row, probe)`, for the rows of a binary search for `probe`: the probe's sort
    /// values read once when the source can (see `LiveRowSource.probeComparator`).
    private func isBefore(_ probe: LiveEntry) -> (LiveEntry) -> Bool {
        guard probe.order == nil, let compare = sourceBox.probeComparator(probe) else {
            return { self.precedes($0, probe) }
        }
        return { row in
            switch compare(row) {
            case .orderedAscending: return true
            case .orderedDescending: return false
            case .orderedSame: return row.key.lexicographicallyPrecedes(probe.key)
            }
        }
    }

    /// The position of `row` (as it is in `list`) in `list`, or nil when it is not there.
    ///
    /// Found by a binary search, and else by a walk of the whole list: the list holds its rows
    /// unretained, so a row let go of must leave it wherever it is. The search misses a row only
    /// when the order is not a total one: a sort by the models compares with the sort
    /// descriptors, and `String`'s `<` is not total for every string (`"\u{C5}\0"` and
    /// `"\u{212B}"` are neither before, after nor equal to each other).
    private func position(of row: LiveEntry, in list: RowList) -> Int? {
        let position = list.partitionPoint(before: row, isBefore: isBefore(row))
        if position < list.count, list[position] === row || list[position].key == row.key { return position }
        return list.position { $0 === row || $0.key == row.key }
    }

    // MARK: - The change to the window

    /// The change from the window of `before` to the window of `rows`, given the keys of the
    /// rows the commit touched and their models before it (for those that were held).
    ///
    /// A row the commit did not touch keeps its place relative to other such rows, and shifts by
    /// at most `touched.count` positions, so only the touched rows and the rows that many
    /// positions from either edge of the old and new windows can enter, leave or move.
    private func windowChange(
        from before: RowList, touched: [[UInt8]], oldRows: [RecordKey: LiveEntry], sequence: UInt64
    ) -> RowChange {
        let window = self.window
        let band = touched.count + 1
        var touchedKeys = SmallKeyedTable<Void>(capacity: touched.count)
        for key in touched { touchedKeys.set((), for: key) }

        // The touched rows, and at most `band` rows at each edge of each window.
        var candidates = SmallKeyedTable<WindowCandidate>(capacity: touched.count + 4 * band)
        func offsetInWindow(_ position: Int?) -> Int? { position.flatMap { window.offset(ofPosition: $0) } }
        // Rows near the edges of both windows.
        func edgePositions(count: Int) -> [Int] { window.edgePositions(in: count, width: band) }
        // The touched rows, by binary search; their positions give every other row's.
        var removedAt: [Int] = []  // positions in `before`, of touched rows held before
        var insertedAt: [Int] = []  // positions in `rows`, of touched rows held now
        for key in touchedKeys.orderedKeys {
            let oldRow = oldRows[RecordKey(key)]
            let newRow = held[key]
            let oldPosition = oldRow.flatMap { position(of: $0, in: before) }
            let newPosition = newRow.flatMap { position(of: $0, in: rows) }
            if let oldPosition { removedAt.append(oldPosition) }
            if let newPosition { insertedAt.append(newPosition) }
            candidates.set(
                WindowCandidate(
                    oldOffset: offsetInWindow(oldPosition), newOffset: offsetInWindow(newPosition),
                    old: oldRow, new: newRow, touched: true), for: key)
        }
        removedAt.sort()
        insertedAt.sort()
        // An untouched row keeps its rank among the untouched rows: its position in one list
        // maps to the other by counting the touched positions around it (nil: not in that list).
        func rank(_ position: Int, skipping touched: [Int]) -> Int {
            position - touched.prefix { $0 < position }.count
        }
        func mapped(rank: Int, around touched: [Int], count: Int) -> Int? {
            var position = rank
            for taken in touched {
                if taken <= position { position += 1 } else { break }
            }
            return position < count ? position : nil
        }
        for position in edgePositions(count: before.count) where !touchedKeys.contains(before[position].key) {
            let row = before[position]
            let newPosition = mapped(rank: rank(position, skipping: removedAt), around: insertedAt, count: rows.count)
            candidates.set(
                WindowCandidate(
                    oldOffset: window.offset(ofPosition: position)!, newOffset: offsetInWindow(newPosition), old: row,
                    new: newPosition == nil ? nil : row, touched: false), for: row.key)
        }
        for position in edgePositions(count: rows.count) where !touchedKeys.contains(rows[position].key) {
            let row = rows[position]
            guard !candidates.contains(row.key) else { continue }
            let oldPosition = mapped(rank: rank(position, skipping: insertedAt), around: removedAt, count: before.count)
            candidates.set(
                WindowCandidate(
                    oldOffset: offsetInWindow(oldPosition), newOffset: window.offset(ofPosition: position)!,
                    old: oldPosition == nil ? nil : row, new: row, touched: false), for: row.key)
        }

        // Rows in the old window that are not untouched rows of both windows, and the same in
        // the new one: every other row keeps its order, so a touched row of both windows stays
        // in place when as many stable rows precede it in each.
        var change = RowChange(sequence: sequence)
        var oldUnstable: [Int] = []
        var newUnstable: [Int] = []
        var common: [WindowCandidate] = []
        for candidate in candidates.values {
            switch (candidate.oldOffset, candidate.newOffset) {
            case (let old?, nil):
                change.removals.append((old, candidate.old!))
                oldUnstable.append(old)
            case (nil, let new?):
                change.insertions.append((new, candidate.new!))
                newUnstable.append(new)
            case (let old?, let new?) where candidate.touched:
                common.append(candidate)
                oldUnstable.append(old)
                newUnstable.append(new)
            default:
                break
            }
        }
        oldUnstable.sort()
        newUnstable.sort()
        func stableBefore(_ offset: Int, _ unstable: [Int]) -> Int {
            var low = 0
            var high = unstable.count
            while low < high {
                let middle = (low + high) / 2
                if unstable[middle] < offset { low = middle + 1 } else { high = middle }
            }
            return offset - low
        }
        var inPlace: [(old: Int, new: Int, oldRow: LiveEntry, row: LiveEntry)] = []
        for candidate in common {
            let old = candidate.oldOffset!
            let new = candidate.newOffset!
            if stableBefore(old, oldUnstable) == stableBefore(new, newUnstable) {
                inPlace.append((old, new, candidate.old!, candidate.new!))
            } else {
                change.moves.append((old, new, candidate.old!, candidate.new!))
            }
        }
        // Touched rows in the same gap between stable rows may have swapped: keep the longest
        // run in order in place, and move the others.
        inPlace.sort { $0.old < $1.old }
        let keep = ResultsDiff.longestIncreasingSubsequence(inPlace.map { $0.new })
        for (index, row) in inPlace.enumerated() {
            if keep.contains(index) {
                change.updates.append((row.old, row.new, row.oldRow, row.row))
            } else {
                change.moves.append((row.old, row.new, row.oldRow, row.row))
            }
        }
        change.removals.sort { $0.offset < $1.offset }
        change.insertions.sort { $0.offset < $1.offset }
        change.moves.sort { $0.to < $1.to }
        change.updates.sort { $0.offset < $1.offset }
        return change
    }
}

/// An immutable box for a value read in place.
private final class SourceBox<Value: LiveRowSource> {
    let value: Value

    init(_ value: Value) { self.value = value }

    /// `value.probeComparator(_:)`, the source read in place.
    func probeComparator(_ probe: LiveEntry) -> ((LiveEntry) -> ComparisonResult)? {
        value.probeComparator(probe)
    }

    /// `value.row(for:filtered:order:)`, the source read in place: the same call through
    /// `value` from outside the box copied the whole source first.
    func row(
        for change: DecodedChange, filtered: Bool, order: (RecordValue) throws -> [UInt8]?
    ) throws -> LiveEntry? {
        try value.row(for: change, filtered: filtered, order: order)
    }
}
