import RillStorage

/// Where one entity's records live, and what kind of identifier they use.
package struct EntityStorage: Sendable, Hashable {
    package let name: String
    package let identifierKind: IdentifierKind
    /// The projection: identifier key → current record.
    package let database: Database

    static let catalogPrefix = "entity:"
    static let catalogVersion: UInt8 = 1

    static func databaseName(for entity: String) -> String { "records:" + entity }

    static func catalogKey(for entity: String) -> [UInt8] { Array((catalogPrefix + entity).utf8) }

    static func catalogValue(identifierKind: IdentifierKind) -> [UInt8] {
        [catalogVersion, identifierKind.rawValue]
    }

    static func identifierKind(fromCatalogValue raw: UnsafeRawBufferPointer, entity: String) throws -> IdentifierKind {
        guard raw.count >= 2, raw[0] == catalogVersion, let kind = IdentifierKind(rawValue: raw[1]) else {
            throw RillError(.corruptStore, "the catalog entry of entity \(entity) is unreadable")
        }
        return kind
    }
}
