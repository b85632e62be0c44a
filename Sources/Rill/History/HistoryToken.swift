import Foundation

/// A position in a store's history: the commit with a sequence number, and everything before it.
///
/// Every transaction of ``ModelContext/fetchHistory(_:)`` carries its token. Persist the last one
/// an app processed (it is `Codable`, and its ``sequence`` is a plain number) to ask later for
/// what came after it, to resume a live query from there, or to read the store as it was then.
///
/// ```swift
/// let token = HistoryToken(sequence: UserDefaults.standard.lastProcessed)
/// let missed = try context.fetchHistory(HistoryDescriptor(after: token))
/// ```
public struct HistoryToken: Hashable, Comparable, Codable, Sendable, CustomStringConvertible {
    /// The sequence number of the commit; 0 is the empty store, before the first commit.
    public let sequence: UInt64

    /// The token of commit `sequence` (0: before the first commit).
    public init(sequence: UInt64) {
        self.sequence = sequence
    }

    public static func < (lhs: HistoryToken, rhs: HistoryToken) -> Bool { lhs.sequence < rhs.sequence }

    /// The sequence number, as `rill log` and the daemon print it.
    public var description: String { String(sequence) }

    /// A token encodes as its sequence number alone.
    public init(from decoder: any Decoder) throws {
        sequence = try decoder.singleValueContainer().decode(UInt64.self)
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        try container.encode(sequence)
    }
}
