import Foundation

/// One record's change in a ``HistoryTransaction``, with its values: an insert its record, a
/// delete the record as it was, an update the record before and after and the fields that
/// changed between them.
///
/// Decode the values as the model type, or as any `Decodable` type that reads the record's
/// fields:
///
/// ```swift
/// for change in transaction.changes(of: Book.self) where change.kind == .update {
///     let (before, after) = (try change.before(as: Book.self)!, try change.after(as: Book.self)!)
///     print("\(after.title): \(change.changedFields) — price \(before.price) → \(after.price)")
/// }
/// ```
public struct HistoryChange: Sendable {
    /// What a change did to its record.
    public enum Kind: String, Sendable, Hashable, CaseIterable {
        /// The record was created.
        case insert
        /// The record changed.
        case update
        /// The record was deleted.
        case delete
    }

    /// What the change did.
    public let kind: Kind
    /// The entity of the record (``PersistentModel/entityName``).
    public let entityName: String
    /// For an update, the top-level fields whose value changed (added, changed or removed), in
    /// the order of the record after it; empty for an insert or a delete.
    public let changedFields: [String]

    /// The change as the log keeps it.
    package let stored: LogEntry.Change
    /// The commit it belongs to, for errors.
    package let sequence: UInt64
    /// False for a commit written before stores kept the record before each change (store
    /// format 2 and earlier, not yet opened for writing).
    private let holdsBefore: Bool

    init(_ change: LogEntry.Change, sequence: UInt64, holdsBefore: Bool) {
        kind =
            switch change.kind {
            case .insert: .insert
            case .update: .update
            case .delete: .delete
            }
        entityName = change.entity
        changedFields = change.changedFields
        stored = change
        self.sequence = sequence
        self.holdsBefore = holdsBefore
    }

    /// The record's identifier as text (a number, a string or a UUID), as `rill` prints it.
    public var identifierDescription: String {
        stored.key.withUnsafeBytes { AnyIdentifier(storageKey: $0) }.map(\.description) ?? "?"
    }

    /// The record's identifier as `type`, or nil when it is of another kind (an integer read as
    /// a `UUID`, say).
    public func identifier<ID: ModelIdentifier>(as type: ID.Type) -> ID? {
        switch stored.key.withUnsafeBytes({ AnyIdentifier(storageKey: $0) }) {
        case .integer(let value):
            if let value = value as? ID { return value }
            return Int(exactly: value).flatMap { $0 as? ID }
        case .string(let value): return value as? ID
        case .uuid(let value): return value as? ID
        case nil: return nil
        }
    }

    /// The record as it was before the change: nil for an insert.
    ///
    /// - Throws: ``RillError`` with `.decodingFailed` when the record does not decode as `T`,
    ///   and `.unsupportedFormat` for a commit written by a Rill that did not keep the record
    ///   before a change (open the store once with write permission to upgrade it).
    public func before<T: Decodable>(as type: T.Type) throws -> T? {
        guard kind != .insert else { return nil }
        return try decode(try beforeRecord(), as: T.self, what: "before")
    }

    /// The record as the change left it: nil for a delete.
    ///
    /// - Throws: ``RillError`` with `.decodingFailed` when the record does not decode as `T`.
    public func after<T: Decodable>(as type: T.Type) throws -> T? {
        try decode(stored.record, as: T.self, what: "after")
    }

    /// The stored bytes of the record before the change; nil for an insert.
    package func beforeRecord() throws -> [UInt8]? {
        guard kind != .insert else { return nil }
        guard holdsBefore, let before = stored.before else { throw LogEntry.lacksBeforeImages(sequence) }
        return before
    }

    private static func decodeModel<M: PersistentModel>(_ type: M.Type, _ record: [UInt8]) throws -> Any {
        try M.decodeStored(from: record)
    }

    private func decode<T: Decodable>(_ record: [UInt8]?, as type: T.Type, what: String) throws -> T? {
        guard let record else { return nil }
        do {
            // A model type reads records of its earlier versions through its evolution.
            if let model = T.self as? any PersistentModel.Type, let value = try Self.decodeModel(model, record) as? T {
                return value
            }
            return try RecordCoder.decode(T.self, from: record)
        } catch {
            throw RillError(
                .decodingFailed,
                "the \(entityName) \(identifierDescription) \(what) commit \(sequence) does not decode as \(T.self): "
                    + "\(error)", underlyingError: error)
        }
    }
}
