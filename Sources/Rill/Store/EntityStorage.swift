import RillStorage

/// Where one entity's records live, and what kind of identifier they use.
package struct EntityStorage: Sendable, Hashable {
    package let name: String
    package let identifierKind: IdentifierKind
    /// The projection: identifier key → current record.
    let database: Database
    /// Every index of the entity in the store (not only those a model type declares): each save
    /// maintains all of them.
    package var indexes: [IndexStorage] = [] {
        didSet {
            hasUniqueIndexes = indexes.contains { $0.uniqueness != nil }
            uniqueFields = indexes.reduce(into: []) { if $1.uniqueness != nil { $0.formUnion($1.topLevelFields) } }
            indexedFields = indexes.reduce(into: []) { $0.formUnion($1.topLevelFields) }
        }
    }
    /// The top-level fields the indexes read: all a save parses of a record to keep them.
    private(set) var indexedFields: Set<String> = []
    /// Whether some index is unique: a save checks the unique indexes of an entity that has one,
    /// and of no other.
    package private(set) var hasUniqueIndexes = false
    /// The top-level fields the unique indexes read: all a save decodes of a record to check them.
    private(set) var uniqueFields: Set<String> = []
    /// The catalog version this description was read at; a save that finds another version in
    /// the store reloads it first (another process may have added an index).
    package var catalogVersion: UInt64 = 0
    /// The entity's relationships, stored references and inverses (see `RelationshipSchema`).
    package var relationships: [RelationshipSchema] = []
    /// The store's reference index; nil while no entity of the store has a relationship.
    var references: Database?
    /// The relationships whose references the entity's records store.
    var storedReferences: [RelationshipSchema] { relationships.filter(\.isStored) }

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
