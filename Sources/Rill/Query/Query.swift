import Foundation

/// A whole query over one entity: which records, in what order, which slice.
///
/// Equality and hashing compare what the query means, not where it came from: `source` is left out.
package struct Query: Hashable, Sendable {
    package var entity: String
    package var predicate: QueryNode?
    package var sort: [QuerySortKey]
    package var limit: Int?
    package var offset: Int?
    /// The text the query was parsed from, with the columns of its paths (nil for a query built
    /// in code): errors found after parsing point into it.
    package var source: QuerySource?

    package init(
        entity: String, predicate: QueryNode? = nil, sort: [QuerySortKey] = [], limit: Int? = nil, offset: Int? = nil,
        source: QuerySource? = nil
    ) {
        self.entity = entity
        self.predicate = predicate
        self.sort = sort
        self.limit = limit
        self.offset = offset
        self.source = source
    }

    package static func == (lhs: Query, rhs: Query) -> Bool {
        lhs.entity == rhs.entity && lhs.predicate == rhs.predicate && lhs.sort == rhs.sort && lhs.limit == rhs.limit
            && lhs.offset == rhs.offset
    }

    package func hash(into hasher: inout Hasher) {
        hasher.combine(entity)
        hasher.combine(predicate)
        hasher.combine(sort)
        hasher.combine(limit)
        hasher.combine(offset)
    }
}
