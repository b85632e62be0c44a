import RillStorage

/// Where one entity's records live, and what kind of identifier they use.
///
/// Its fields live in one immutable box: a fetch, a save and the follower copy the description
/// many times (into executors, plans and closures), and a copy of seven reference-counted fields
/// cost seven retains and seven releases where the box costs one. A change (the catalog's, rare)
/// makes a new box.
@usableFromInline
package struct EntityStorage: Sendable, Hashable {
    private final class Fields: Sendable {
        let name: String
        let identifierKind: IdentifierKind
        let database: Database
        let indexes: [IndexStorage]
        let indexedFields: Set<String>
        let hasUniqueIndexes: Bool
        let uniqueFields: Set<String>
        let catalogVersion: UInt64
        let relationships: [RelationshipSchema]
        let references: Database?

        init(
            name: String, identifierKind: IdentifierKind, database: Database, indexes: [IndexStorage],
            catalogVersion: UInt64, relationships: [RelationshipSchema], references: Database?
        ) {
            self.name = name
            self.identifierKind = identifierKind
            self.database = database
            self.indexes = indexes
            hasUniqueIndexes = indexes.contains { $0.uniqueness != nil }
            uniqueFields = indexes.reduce(into: []) { if $1.uniqueness != nil { $0.formUnion($1.topLevelFields) } }
            indexedFields = indexes.reduce(into: []) { $0.formUnion($1.topLevelFields) }
            self.catalogVersion = catalogVersion
            self.relationships = relationships
            self.references = references
        }

        /// These fields with some replaced.
        func with(
            indexes: [IndexStorage]? = nil, catalogVersion: UInt64? = nil, relationships: [RelationshipSchema]? = nil,
            references: Database?? = nil
        ) -> Fields {
            Fields(
                name: name, identifierKind: identifierKind, database: database, indexes: indexes ?? self.indexes,
                catalogVersion: catalogVersion ?? self.catalogVersion,
                relationships: relationships ?? self.relationships, references: references ?? self.references)
        }
    }

    private var fields: Fields

    package init(name: String, identifierKind: IdentifierKind, database: Database) {
        fields = Fields(
            name: name, identifierKind: identifierKind, database: database, indexes: [], catalogVersion: 0,
            relationships: [], references: nil)
    }

    package var name: String { fields.name }
    package var identifierKind: IdentifierKind { fields.identifierKind }
    /// The projection: identifier key → current record.
    var database: Database { fields.database }
    /// The LMDB handle of the database of its records: what tells two entities' records apart
    /// in one snapshot (`SharedRows.Known`).
    var recordsHandle: UInt32 { fields.database.handle }
    /// Every index of the entity in the store (not only those a model type declares): each save
    /// maintains all of them.
    package var indexes: [IndexStorage] {
        get { fields.indexes }
        set { fields = fields.with(indexes: newValue) }
    }
    /// The top-level fields the indexes read: all a save parses of a record to keep them.
    var indexedFields: Set<String> { fields.indexedFields }
    /// Whether some index is unique: a save checks the unique indexes of an entity that has one,
    /// and of no other.
    package var hasUniqueIndexes: Bool { fields.hasUniqueIndexes }
    /// The top-level fields the unique indexes read: all a save decodes of a record to check them.
    var uniqueFields: Set<String> { fields.uniqueFields }
    /// The catalog version this description was read at; a save that finds another version in
    /// the store reloads it first (another process may have added an index).
    package var catalogVersion: UInt64 {
        get { fields.catalogVersion }
        set { fields = fields.with(catalogVersion: newValue) }
    }
    /// The entity's relationships, stored references and inverses (see `RelationshipSchema`).
    package var relationships: [RelationshipSchema] {
        get { fields.relationships }
        set { fields = fields.with(relationships: newValue) }
    }
    /// The store's reference index; nil while no entity of the store has a relationship.
    var references: Database? {
        get { fields.references }
        set { fields = fields.with(references: .some(newValue)) }
    }
    /// The relationships whose references the entity's records store.
    var storedReferences: [RelationshipSchema] { relationships.filter(\.isStored) }

    @usableFromInline
    package static func == (lhs: EntityStorage, rhs: EntityStorage) -> Bool {
        if lhs.fields === rhs.fields { return true }
        return lhs.name == rhs.name && lhs.identifierKind == rhs.identifierKind && lhs.database == rhs.database
            && lhs.indexes == rhs.indexes && lhs.catalogVersion == rhs.catalogVersion
            && lhs.relationships == rhs.relationships && lhs.references == rhs.references
    }

    @usableFromInline
    package func hash(into hasher: inout Hasher) {
        hasher.combine(name)
        hasher.combine(identifierKind)
        hasher.combine(database)
        hasher.combine(indexes)
        hasher.combine(catalogVersion)
        hasher.combine(relationships)
        hasher.combine(references)
    }

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
