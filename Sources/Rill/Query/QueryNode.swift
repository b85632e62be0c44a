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
