import Foundation

/// What a maintained query's rows are made of and how they are chosen and ordered: typed models
/// of a `FetchDescriptor` (``ModelRowSource``), or schema-less records of a text query
/// (``RecordRowSource``). `MaintainedQuery` does the rest — positions, windows, refills, changes —
/// the same way for both.
protocol LiveRowSource {
    associatedtype Element: Sendable

    var entityName: String { get }
    /// The window: how many matches to skip, and how many to keep after them (nil: all).
    var offset: Int? { get }
    var limit: Int? { get }
    /// The predicate's complete translation, when there is one: it decides alone whether a
    /// record matches, on the schema-less record. Nil with no predicate too.
    var filter: QueryNode? { get }
    /// The top-level fields the predicate and sort read; nil when not known (every field).
    var dependencies: Set<String>? { get }
    /// The sort as field paths whose index-key order is the sort's: rows then carry order keys
    /// and compare with `memcmp`. Nil when rows must be compared with ``precedes(_:_:)``.
    var orderPaths: [QuerySortKey]? { get }

    /// The row of a changed record when it matches, else nil. `filtered` tells that the record
    /// passed ``filter`` already.
    func row(
        for change: DecodedChange, filtered: Bool, order: (RecordValue) throws -> [UInt8]?
    ) throws -> LiveEntry?

    /// The row of a stored record when it matches, else nil.
    func row(
        record: [UInt8], key: [UInt8], order: (RecordValue) throws -> [UInt8]?
    ) throws -> LiveEntry?

    /// The first `limit` matches (all with nil), in order, as of the transaction's snapshot.
    func fetch(
        limit: Int?, in transaction: StoreSnapshot, store: Store, order: (RecordValue, [UInt8]) throws -> [UInt8]?
    ) throws -> [LiveEntry]

    /// The sort's order of two rows without order keys (`.orderedSame` for ties: the identifier
    /// decides).
    func compare(_ lhs: LiveEntry, _ rhs: LiveEntry) -> ComparisonResult

    /// `compare`, as a function a maintained query keeps: it compares rows at every step of its
    /// binary searches, and calling the source's method there copied the whole source each time.
    var comparator: (LiveEntry, LiveEntry) -> ComparisonResult { get }

    /// The sort's order of each row relative to `probe` (`compare(row, probe)`), the probe's
    /// sort values read once for the many comparisons of a binary search; nil to compare through
    /// `comparator`.
    func probeComparator(_ probe: LiveEntry) -> ((LiveEntry) -> ComparisonResult)?

    /// The element a row of this source shows.
    static func element(_ row: LiveEntry) -> Element

    /// A condition every match meets, when the predicate has no complete translation but a
    /// partial one: it screens out changes of records that cannot match. Nil for none.
    var necessaryCondition: QueryNode? { get }

    /// The other entities the predicate reads through relationships.
    var relatedDependencies: [RelatedDependency] { get }
    /// Where the rows' tests find the commit's relationship loader; nil when they read none.
    var relationshipSlot: RelationshipSlot? { get }
}

extension LiveRowSource {
    var comparator: (LiveEntry, LiveEntry) -> ComparisonResult {
        { [self] lhs, rhs in compare(lhs, rhs) }
    }

    func probeComparator(_ probe: LiveEntry) -> ((LiveEntry) -> ComparisonResult)? { nil }

    var relatedDependencies: [RelatedDependency] { [] }

    var necessaryCondition: QueryNode? { nil }

    var relationshipSlot: RelationshipSlot? { nil }

    /// The schema-less record in `bytes`.
    static func recordValue(_ bytes: [UInt8], key: [UInt8], entity: String) throws -> RecordValue {
        try bytes.withUnsafeBytes { bytes in
            try key.withUnsafeBytes { try Store.recordValue(bytes, key: $0, entity: entity) }
        }
    }
}
