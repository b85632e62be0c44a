import RillStorage

/// Where one entity's records live, and what kind of identifier they use.
package struct EntityStorage: Sendable, Hashable {
    package let name: String
    package let identifierKind: IdentifierKind
    /// The projection: identifier key → current record.
    package let database: Database
    /// Every index of the entity in the store (not only those a model type declares): each save
    /// maintains all of them.
    package var indexes: [IndexStorage] = []
    /// The catalog version this description was read at; a save that finds another version in
    /// the store reloads it first (another process may have added an index).
    package var catalogVersion: UInt64 = 0

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

/// One index of an entity: which fields, in which database.
///
/// Keys are the `IndexKey` encodings of the indexed values, one after the other, followed by the
/// record's identifier key (which makes every key unique and breaks ties by identifier); values
/// are empty.
package struct IndexStorage: Sendable, Hashable {
    /// The index's name: its field paths, dot-joined, comma-separated (`author,address.city`).
    package let name: String
    package let fieldPaths: [[String]]
    package let database: Database

    static func databaseName(entity: String, index: String) -> String { "index:\(entity):\(index)" }
    static func catalogPrefix(entity: String) -> String { "index:\(entity):" }

    static func fieldPaths(fromName name: String) -> [[String]] {
        name.split(separator: ",").map { $0.split(separator: ".").map(String.init) }
    }

    /// The index key of a record: its indexed values' encodings, then the identifier key.
    package func key(for record: RecordValue, id: [UInt8], entity: String) throws -> [UInt8] {
        var key: [UInt8] = []
        key.reserveCapacity(32 + id.count)
        for path in fieldPaths {
            do {
                try IndexKey.append(QueryEvaluator.read(path, from: record), to: &key)
            } catch {
                throw RillError(
                    .invalidConfiguration,
                    "the index \(entity)(\(name)) cannot hold the value of `\(path.joined(separator: "."))`: \(error)",
                    underlyingError: error)
            }
        }
        key += id
        return key
    }

    /// The top-level fields the index reads; a change to none of them leaves its key as it was.
    var topLevelFields: Set<String> { Set(fieldPaths.compactMap(\.first)) }
}
