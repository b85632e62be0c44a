/// An error thrown by Rill.
///
/// Match on ``code`` to react to a kind of failure; ``message`` says what went wrong in words
/// meant for a person, naming the store, entity, field or position involved; ``underlyingError``
/// is the lower-level cause, when there is one.
///
/// For example:
///
/// ```swift
/// do {
///     try context.save()
/// } catch let error as RillError where error.code == .encodingFailed {
///     print(error.message)
/// }
/// ```
public struct RillError: Error, CustomStringConvertible, Sendable {
    /// A kind of failure. New codes may be added in later versions.
    public struct Code: Hashable, Sendable, CustomStringConvertible {
        /// The code's name, as it appears in messages.
        public let name: String
        private init(_ name: String) { self.name = name }
        public var description: String { name }

        /// No store exists at the location, and the operation does not create one.
        public static let storeNotFound = Code("storeNotFound")
        /// The location exists but is not a store directory (for example a plain file).
        public static let notAStore = Code("notAStore")
        /// The process lacks permission to open or create the store.
        public static let permissionDenied = Code("permissionDenied")
        /// The store was written by a newer version of Rill, with a format this version cannot read.
        public static let unsupportedFormat = Code("unsupportedFormat")
        /// The store holds data that Rill cannot read back.
        public static let corruptStore = Code("corruptStore")
        /// A model could not be encoded; nothing was saved.
        public static let encodingFailed = Code("encodingFailed")
        /// A stored record could not be decoded as the requested model type.
        public static let decodingFailed = Code("decodingFailed")
        /// A model's identifier cannot be stored (for example a string id over 510 bytes).
        public static let invalidIdentifier = Code("invalidIdentifier")
        /// The model type is not part of the container's schema, or the entity is unknown to the store.
        public static let unknownEntity = Code("unknownEntity")
        /// A record given as JSON (by the `rill` tool or the daemon) does not fit its entity: an
        /// unknown field, a value of the wrong kind, a missing identifier.
        public static let invalidRecord = Code("invalidRecord")
        /// The container's configuration does not allow saving.
        public static let readOnly = Code("readOnly")
        /// The disk is full or failed to write; the save did not happen and the store is unchanged.
        public static let diskFull = Code("diskFull")
        /// A predicate or sort could not be evaluated.
        public static let queryFailed = Code("queryFailed")
        /// A text query names a field that its entity's records do not have (the message names
        /// the field, its column in the query and the closest field there is).
        public static let unknownField = Code("unknownField")
        /// A text query compares a field with a value of a kind it never equals or orders with
        /// (a number field with the string `"100"`), so that the comparison could never hold.
        public static let kindMismatch = Code("kindMismatch")
        /// The configuration is not valid.
        public static let invalidConfiguration = Code("invalidConfiguration")
        /// A call that cannot be made where it was made (for example waiting for a live query
        /// from inside an observation handler that runs on the query's own follower thread).
        public static let misuse = Code("misuse")
        /// The last write of a save's commit, the one that makes it the newest, failed (an I/O
        /// error of the disk). The message names the write, its error and the commit. The save is
        /// not acknowledged, but it is not certainly absent: the write may have reached the disk,
        /// so the commit may be found after a restart, as with other databases. The store reopens
        /// its files by itself and goes on serving; when that fails, every use of it fails with
        /// this code until it is opened again.
        public static let storeFailed = Code("storeFailed")
        /// Any other failure of the storage engine.
        public static let storage = Code("storage")
        /// A backup or a restore was given a destination that is not empty (it may hold a store).
        public static let destinationNotEmpty = Code("destinationNotEmpty")
        /// A request reaches before the log's horizon: the commits up to it were compacted into
        /// a snapshot (`rill compact`), so their history, the results as of them and resuming
        /// from them are gone. The message names the horizon.
        public static let historyCompacted = Code("historyCompacted")
        /// A compaction would drop commits that a registered durable subscription has not
        /// processed yet; the message names the subscription and its position.
        public static let historyRetained = Code("historyRetained")
        /// A delete is refused by a relationship: a delete rule that denies while related models
        /// exist, or a required reference to the deleted model. The message names both models;
        /// nothing of the save is written.
        public static let deleteDenied = Code("deleteDenied")
        /// A save would leave a reference to a model that does not exist. The message names the
        /// reference; nothing of the save is written.
        public static let danglingReference = Code("danglingReference")
        /// A save would give two records the same values of a unique index (see
        /// ``ModelIndex/unique(_:onConflict:)``), or a unique index cannot be built because stored
        /// records already share values. Nothing was written; ``RillError/uniqueConflict`` names
        /// the entity, the fields, the values and the records.
        public static let uniqueConflict = Code("uniqueConflict")
        /// A model reads a field as another kind than the store's current schema records, and
        /// declares no migration for it (or the store was opened read-only, so the migration
        /// cannot run). The underlying error is a ``SchemaKindChange`` naming the entity, the
        /// field, both schema versions and both kinds.
        public static let migrationRequired = Code("migrationRequired")
        /// The store's replicated log did not answer in time (the node is cut off from it, or it
        /// has no quorum). A save that fails so may still have been committed: the message says
        /// which commit it would have been, and the node applies it from the log if it was.
        public static let replicationUnavailable = Code("replicationUnavailable")
        /// The store and its replicated log disagree: the store holds a commit the log does not,
        /// or another, or the log no longer holds the commits the store lacks.
        public static let replicationDiverged = Code("replicationDiverged")
    }

    /// The kind of failure.
    public let code: Code
    /// What went wrong, for a person.
    public let message: String
    /// The lower-level cause, when there is one.
    public let underlyingError: (any Error)?

    public init(_ code: Code, _ message: String, underlyingError: (any Error)? = nil) {
        self.code = code
        self.message = message
        self.underlyingError = underlyingError
    }

    public var description: String {
        if let underlyingError {
            return "\(message) [\(code)] (\(underlyingError))"
        }
        return "\(message) [\(code)]"
    }
}
