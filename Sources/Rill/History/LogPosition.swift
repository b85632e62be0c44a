import Foundation

/// A point in a store's history as a person gives it: a commit's sequence number, or a date
/// (the last commit made at or before it). `rill log --since/--until`, `rill query --as-of` and
/// the daemon's `as_of`, `since` and `until` parameters take one.
package enum LogPosition: Sendable, Hashable, CustomStringConvertible {
    case sequence(UInt64)
    case date(Date)

    /// A whole number is a sequence; otherwise an ISO-8601 date-time (`2026-03-01T12:00:00Z`,
    /// with an offset or fractions) or a calendar date (`2026-03-01`, midnight UTC), as the
    /// query language reads dates; nil for other text.
    package init?(parsing text: String) {
        if let sequence = UInt64(text) {
            self = .sequence(sequence)
        } else if let seconds = ISO8601Time.secondsSinceReferenceDate(parsing: text, accepting: .queryLiteral) {
            self = .date(Date(timeIntervalSinceReferenceDate: seconds))
        } else {
            return nil
        }
    }

    /// What the text of a position may be, for error messages.
    package static let expected = "a commit's sequence number or an ISO-8601 date such as 2026-03-01T12:00:00Z"

    package var description: String {
        switch self {
        case .sequence(let sequence): "commit \(sequence)"
        case .date(let date): ISO8601Time.string(date)
        }
    }

    /// The commit the position names, as `snapshot` sees the log: a sequence as it is, a date
    /// the last commit made at or before it (0 before the first).
    package func sequence(in store: Store, snapshot: StoreSnapshot) throws -> UInt64 {
        switch self {
        case .sequence(let sequence): sequence
        case .date(let date): try store.log.lastSequence(atOrBefore: date, in: snapshot)
        }
    }
}
