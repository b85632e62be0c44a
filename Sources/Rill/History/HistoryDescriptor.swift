import Foundation

/// Which transactions of a store's history to fetch, and in what order: the history counterpart
/// of ``FetchDescriptor``.
///
/// Every criterion is optional and they combine: a range of commits (``after``, ``through``), a
/// range of commit dates (``since``, ``until``), the entities whose changes count, the authors,
/// and a limit.
///
/// ```swift
/// // What Alice changed in books yesterday, newest first.
/// var descriptor = HistoryDescriptor(since: yesterday, until: today, authors: ["alice"])
/// descriptor.include(Book.self)
/// descriptor.sortOrder = .reverse
/// let transactions = try context.fetchHistory(descriptor)
/// ```
///
/// Commit dates never decrease along the log (a commit is stamped no earlier than the one
/// before it, even when the clock steps back), so a date range is found by binary search and
/// costs what the transactions inside it cost.
public struct HistoryDescriptor: Sendable, Hashable {
    /// Only transactions after this one; nil for the beginning of the log.
    public var after: HistoryToken?
    /// Only transactions up to this one, included; nil for the last commit.
    public var through: HistoryToken?
    /// Only transactions committed at or after this date.
    public var since: Date?
    /// Only transactions committed at or before this date.
    public var until: Date?
    /// Only the changes of these entities (``PersistentModel/entityName``), and only the
    /// transactions that have one; nil for every entity.
    public var entityNames: Set<String>?
    /// Only the transactions saved by a context with one of these authors (``ModelContext/author``);
    /// nil for every transaction, with an author or without.
    public var authors: Set<String>?
    /// At most this many transactions; nil for all.
    public var fetchLimit: Int?
    /// `.forward`, the oldest first (the default), or `.reverse`, the newest first; the limit
    /// counts from that end.
    public var sortOrder: SortOrder

    /// A descriptor of the given criteria; with none, the whole history, oldest first.
    public init(
        after: HistoryToken? = nil, through: HistoryToken? = nil, since: Date? = nil, until: Date? = nil,
        entityNames: Set<String>? = nil, authors: Set<String>? = nil, fetchLimit: Int? = nil,
        sortOrder: SortOrder = .forward
    ) {
        self.after = after
        self.through = through
        self.since = since
        self.until = until
        self.entityNames = entityNames
        self.authors = authors
        self.fetchLimit = fetchLimit
        self.sortOrder = sortOrder
    }

    /// Adds the changes of `type` to those the descriptor keeps (by default it keeps every
    /// entity's; after the first call, only those of the types included).
    public mutating func include<T: PersistentModel>(_ type: T.Type) {
        entityNames = (entityNames ?? []).union([T.entityName])
    }
}

extension HistoryDescriptor {
    /// The entity or author names of a filter as a person gives them (`rill log --entity`, the
    /// daemon's `entity=`): comma-separated, spaces around each trimmed; nil when one is empty.
    package static func names(parsing text: String) -> Set<String>? {
        let names = text.split(separator: ",", omittingEmptySubsequences: false).map {
            $0.trimmingCharacters(in: .whitespaces)
        }
        return names.contains(where: \.isEmpty) ? nil : Set(names)
    }
}
