import Foundation
import RillStorage

extension Store {
    static let referencesDatabaseName = "references"
    /// Kept in `meta` once the reference index exists: a database is looked up only then, since
    /// looking one up takes one of LMDB's handles even when it is missing.
    static let referencesMarkerKey = Array("has-references".utf8)

    /// The reference index as `txn` sees it; nil while no entity has a stored relationship.
    static func referencesDatabase(in txn: WriteTransaction, meta: Database) throws -> Database? {
        guard try txn.get(referencesMarkerKey, in: meta) != nil else { return nil }
        return try txn.database(named: referencesDatabaseName, create: false)
    }

    private static func relationshipsCatalogKey(for entity: String) -> [UInt8] { Array("relations:\(entity)".utf8) }

    /// The relationships the catalog keeps for `entity` (`relations:<Entity>` in `meta`).
    static func relationships(
        of entity: String, in txn: some Transaction, meta: Database
    ) throws
        -> [RelationshipSchema]
    {
        guard let raw = try txn.get(relationshipsCatalogKey(for: entity), in: meta) else { return [] }
        guard let value = try? RecordValue(record: raw), case .array(let items) = value else {
            throw RillError(.corruptStore, "the relationships of entity \(entity) in the catalog are unreadable")
        }
        return try items.map { item in
            guard let relationship = RelationshipSchema(json: item) else {
                throw RillError(.corruptStore, "a relationship of entity \(entity) in the catalog is unreadable")
            }
            return relationship
        }
    }

    /// Keeps `relationships` for `storage`'s entity in `txn` when they differ from the catalog's:
    /// creates the reference index when the store has none, indexes the references the stored
    /// records hold in fields that became references (and forgets those of fields that no longer
    /// are), and bumps the catalog version so that other processes' saves reload the entity.
    ///
    /// - Returns: the storage with its relationships and the reference index.
    static func keepRelationships(
        _ relationships: [RelationshipSchema], of storage: EntityStorage, in txn: WriteTransaction, meta: Database
    ) throws -> EntityStorage {
        var storage = storage
        let stored = try Self.relationships(of: storage.name, in: txn, meta: meta)
        guard stored != relationships else { return storage }
        let references = try txn.database(named: referencesDatabaseName, create: true)!
        try txn.put([1], for: referencesMarkerKey, in: meta)
        storage.references = references
        let before = Set(stored.filter(\.isStored).map(\.field))
        let after = Set(relationships.filter(\.isStored).map(\.field))
        // Entries of fields that are no longer references: the index is keyed by target, so
        // finding one entity's entries takes a walk of all of it (a declaration is rare).
        let dropped = before.subtracting(after)
        if !dropped.isEmpty {
            var doomed: [[UInt8]] = []
            try txn.forEachEntry(in: references) { key, _ in
                if let (_, referrer) = Self.splitReference(key), referrer.entity == storage.name,
                    dropped.contains(referrer.field)
                {
                    doomed.append(Array(key))
                }
                return true
            }
            for key in doomed { _ = try txn.delete(key, in: references) }
        }
        storage.relationships = relationships
        let added = relationships.filter { $0.isStored && !before.contains($0.field) }
        if !added.isEmpty {
            var adding = storage
            adding.relationships = added
            try txn.forEachEntry(in: storage.database) { key, record in
                let id = Array(key)
                let targets = try referencedTargets(in: record, of: adding) { name in
                    try Self.storage(named: name, in: txn, meta: meta)?.identifierKind
                }
                for target in targets {
                    try txn.put(
                        [],
                        for: ReferenceKey.make(
                            target: target.entity, targetKey: target.key, source: storage.name, field: target.field,
                            sourceKey: id),
                        in: references)
                }
                return true
            }
        }
        try txn.put(
            RecordValue.array(relationships.map(\.jsonValue)).recordBytes(),
            for: relationshipsCatalogKey(for: storage.name), in: meta)
        let version = try catalogVersion(in: txn, meta: meta) + 1
        try txn.put(withUnsafeBytes(of: version.bigEndian) { Array($0) }, for: catalogVersionKey, in: meta)
        storage.catalogVersion = version
        return storage
    }

    /// A reference index key split into its target (entity and identifier key) and its referrer.
    static func splitReference(
        _ key: UnsafeRawBufferPointer
    ) -> (
        target: (entity: String, key: [UInt8]), referrer: (entity: String, field: String, key: [UInt8])
    )? {
        guard let first = key.first, key.count > Int(first) + 3 else { return nil }
        let nameEnd = 1 + Int(first)
        let entity = String(decoding: key[1..<nameEnd], as: UTF8.self)
        let length = Int(key[nameEnd]) << 8 | Int(key[nameEnd + 1])
        let keyEnd = nameEnd + 2 + length
        guard key.count > keyEnd else { return nil }
        let target = Array(key[(nameEnd + 2)..<keyEnd])
        guard let referrer = ReferenceKey.referrer(UnsafeRawBufferPointer(rebasing: key[keyEnd...])) else {
            return nil
        }
        return ((entity, target), referrer)
    }

    /// The references `record` holds in `storage`'s stored relationships: each target's entity
    /// and identifier key, with the field that holds it. `targetKind` gives an entity's kind of
    /// identifier (nil when the store has no such entity).
    static func referencedTargets(
        in record: UnsafeRawBufferPointer, of storage: EntityStorage,
        targetKind: (String) throws -> IdentifierKind?
    ) throws -> [(entity: String, key: [UInt8], field: String)] {
        let relationships = storage.storedReferences
        guard !relationships.isEmpty else { return [] }
        let value = try recordValue(
            record, key: UnsafeRawBufferPointer(start: nil, count: 0), entity: storage.name,
            fields: Set(relationships.map(\.field)))
        guard case .map(let fields) = value else { return [] }
        var targets: [(entity: String, key: [UInt8], field: String)] = []
        for relationship in relationships {
            guard let field = fields.first(where: { $0.name == relationship.field })?.value else { continue }
            let values: [RecordValue]
            switch field {
            case .null: values = []
            case .array(let items): values = items
            default: values = [field]
            }
            let kind = try targetKind(relationship.entity)
            for value in values where value != .null {
                let key = try referenceKey(value, targetKind: kind, field: relationship.field, of: storage.name)
                targets.append((relationship.entity, key, relationship.field))
            }
        }
        return targets
    }

    /// The identifier key a stored reference names, for a target entity with identifiers of
    /// `targetKind` (nil when unknown).
    static func referenceKey(
        _ value: RecordValue, targetKind: IdentifierKind?, field: String, of entity: String
    ) throws -> [UInt8] {
        switch (value, targetKind) {
        case (.uuid(let uuid), _): return uuid.storageKey
        case (.int(let number), _): return number.storageKey
        case (.uint(let number), _) where number <= UInt64(Int64.max): return Int64(number).storageKey
        case (.string(let text), .uuid?):
            if let uuid = UUIDText.uuid(text) { return uuid.storageKey }
        case (.string(let text), _):
            let key = text.storageKey
            if key.count <= 511 { return key }
        default:
            break
        }
        throw RillError(
            .invalidRecord,
            "\(entity).\(field) holds \(value.jsonString()), which is not an identifier it can reference")
    }
}
