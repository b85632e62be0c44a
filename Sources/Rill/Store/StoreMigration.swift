import Foundation

/// A migration of an entity's records from one schema version, without the model type: which
/// stored records it rewrites and how (made by the model's `ModelMigration`).
package struct StoreMigration: Sendable {
    /// The store's schema the records are migrated from.
    package var from: EntitySchema
    /// The name of the earlier version's type, for messages.
    package var earlierName: String
    /// Whether a stored record must be rewritten (it does not read as the current version).
    package var needsMigration: @Sendable (_ record: UnsafeRawBufferPointer) -> Bool
    /// The rewritten record of the identifier key `key`.
    package var migrate: @Sendable (_ key: [UInt8], _ record: UnsafeRawBufferPointer) throws -> [UInt8]
}
