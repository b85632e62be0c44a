import Foundation

/// Rill's own query form: what `#Predicate` translations and text queries both become.
///
/// A node evaluates, against one record, to a `RecordValue`; a predicate is a node that evaluates
/// to a Bool. Paths are field names from the record's top level (`.field(["address", "city"])`).
/// Inside the body of a quantifier (`.any` / `.all`), `.element(path)` reads from the current
/// element of the collection instead.
///
/// Reading a path through an array maps over it: `.field(["ingredients", "name"])` on a record
/// whose `ingredients` is an array of maps gives the array of their names. A missing field reads
/// as `.null`.
package indirect enum QueryNode: Hashable, Sendable {
    /// A value read from the record by field path (empty path: the whole record).
    case field([String])
    /// A value read from the current element of the innermost quantifier (empty path: the element).
    case element([String])
    /// A constant.
    case literal(RecordValue)
    /// `lhs op rhs`.
    case compare(QueryComparison, QueryNode, QueryNode)
    /// True when every operand is (true for an empty list).
    case and([QueryNode])
    /// True when any operand is (false for an empty list).
    case or([QueryNode])
    case not(QueryNode)
    /// A string test: `lhs contains rhs`, …, with case and diacritic options.
    case string(QueryStringTest, QueryNode, QueryNode, QueryStringOptions)
    /// `value in [candidates]`.
    case isIn(QueryNode, [QueryNode])
    /// `lower <= value && value <= upper`.
    case between(QueryNode, lower: QueryNode, upper: QueryNode)
    /// True when the body is true for some element of the collection.
    case any(QueryNode, body: QueryNode)
    /// True when the body is true for every element of the collection (true when empty).
    case all(QueryNode, body: QueryNode)
    /// The number of elements of an array (or characters of a string).
    case count(QueryNode)
    /// Arithmetic on numbers.
    case arithmetic(QueryArithmetic, QueryNode, QueryNode)
    /// `-value`.
    case negate(QueryNode)
    /// `value ?? fallback`: the fallback when the value is null.
    case coalesce(QueryNode, QueryNode)
    /// `condition ? then : otherwise`.
    case conditional(QueryNode, then: QueryNode, otherwise: QueryNode)
}

/// A comparison operator.
package enum QueryComparison: String, Hashable, Sendable, CaseIterable {
    case equal = "=="
    case notEqual = "!="
    case less = "<"
    case lessOrEqual = "<="
    case greater = ">"
    case greaterOrEqual = ">="
}

/// A string test.
package enum QueryStringTest: String, Hashable, Sendable, CaseIterable {
    case contains
    case beginsWith = "beginswith"
    case endsWith = "endswith"
    /// Wildcards: `*` any run of characters, `?` one character.
    case like
}

/// Options of a string test: `[c]` case-insensitive, `[d]` diacritic-insensitive, `[cd]` both.
package struct QueryStringOptions: OptionSet, Hashable, Sendable {
    package let rawValue: UInt8
    package init(rawValue: UInt8) { self.rawValue = rawValue }

    package static let caseInsensitive = QueryStringOptions(rawValue: 1)
    package static let diacriticInsensitive = QueryStringOptions(rawValue: 2)
}

/// An arithmetic operator.
package enum QueryArithmetic: String, Hashable, Sendable, CaseIterable {
    case add = "+"
    case subtract = "-"
    case multiply = "*"
    case divide = "/"
    case remainder = "%"
}

/// A sort key of a query: a field path and a direction.
package struct QuerySortKey: Hashable, Sendable {
    package var path: [String]
    package var ascending: Bool

    package init(path: [String], ascending: Bool = true) {
        self.path = path
        self.ascending = ascending
    }
}

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
