import RillLocks
import Synchronization

/// What a store remembers of the text queries of each shape (`QueryShape`), as a prepared
/// statement remembers its checks and its plan: a query of a shape met before is neither
/// checked again nor planned from nothing.
///
/// - The check (`Store.check`) is a matter of the query's shape and of the entity's remembered
///   record shape. A shape is marked checked with the generation of the store's record shapes
///   it passed against, and only when it passed without a problem even suspected (one that
///   records refuted depends on those records). Any change of a record shape — learned,
///   merged, forgotten — starts a new generation, and the next query of the shape is checked
///   again.
/// - The plan: one `PreparedPlan` for the shape, as a `#Predicate` fetch's translation has one;
///   each query binds its own values to it, and anything its values decide is decided again.
///
/// Queries that read through relationships have none: they are checked and planned each time.
final class QueryShapeMemo: Sendable {
    /// What is remembered of one shape.
    final class Entry: Sendable {
        /// The first query of the shape met.
        let template: Query
        /// The plan the shape's queries share.
        let plan = PreparedPlan()
        /// The generation of the record shapes the shape passed its check against; `unchecked`
        /// until it did.
        private let checkedGeneration = Atomic<UInt64>(Entry.unchecked)
        private static let unchecked = UInt64.max

        init(template: Query) { self.template = template }

        /// Whether the shape passed its check against the record shapes of `generation`.
        func isChecked(at generation: UInt64) -> Bool {
            checkedGeneration.load(ordering: .acquiring) == generation
        }

        /// Notes that the shape passed its check against the record shapes of `generation`.
        func markChecked(at generation: UInt64) {
            checkedGeneration.store(generation, ordering: .releasing)
        }
    }

    /// The most shapes remembered; the memo starts afresh past it.
    static let limit = 1_024

    /// By fingerprint (`QueryShape.fingerprint(of:)`): of two shapes with one fingerprint, the
    /// one met last.
    private let entries = Lock<[UInt64: Entry]>([:])

    /// The entry of `query`'s shape, made now when there is none.
    func entry(for query: Query) -> Entry {
        let fingerprint = QueryShape.fingerprint(of: query)
        if let entry = entries.withLock({ $0[fingerprint] }), QueryShape.same(entry.template, query) {
            return entry
        }
        let entry = Entry(template: query)
        entries.withLock { entries in
            if entries.count >= Self.limit { entries.removeAll() }
            entries[fingerprint] = entry
        }
        return entry
    }
}

/// Each entity's record shape, learned for changes given as JSON and for the checks of text
/// queries (see `Store.recordShape(of:declared:fresh:)`), and the generation of the table: every
/// change of it makes a new one, which is what a remembered check (`QueryShapeMemo`) holds to.
struct RecordShapes {
    private(set) var generation: UInt64 = 0
    var byEntity: [String: RecordShape] = [:] {
        didSet { generation &+= 1 }
    }
}
