import Foundation

/// One commit of a store's history: one save, with everything it changed.
///
/// Returned by ``ModelContext/fetchHistory(_:)`` and delivered by ``HistoryObserver``. Its
/// ``changes`` are those of the entities the descriptor asked for, in the order the save made
/// them.
public struct HistoryTransaction: Sendable, Identifiable {
    /// The commit's position in the log.
    public let token: HistoryToken
    /// When the save committed.
    public let timestamp: Date
    /// The author the save was made with, if any.
    public let author: String?
    /// What the save changed, record by record.
    public let changes: [HistoryChange]

    /// The commit's sequence number.
    public var sequence: UInt64 { token.sequence }

    /// The commit's sequence number, unique in its store.
    public var id: UInt64 { token.sequence }

    init(_ entry: LogEntry) {
        token = HistoryToken(sequence: entry.sequence)
        timestamp = entry.timestamp
        author = entry.author
        changes = entry.changes.map {
            HistoryChange($0, sequence: entry.sequence, holdsBefore: entry.holdsBeforeImages)
        }
    }

    /// The changes of records of `type`.
    public func changes<T: PersistentModel>(of type: T.Type) -> [HistoryChange] {
        changes.filter { $0.entityName == T.entityName }
    }
}
