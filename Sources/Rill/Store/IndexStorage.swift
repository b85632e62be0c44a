import RillStorage

/// One index of an entity: which fields, in which database.
///
/// Keys are the `IndexKey` encodings of the indexed values, one after the other (long strings,
/// URLs and data cut to `payloadLimit` bytes), followed by the record's identifier key (which
/// makes every key unique and breaks ties by identifier); values are empty, except for entries
/// whose identifier does not fit in the key (see `IndexEntry`).
package struct IndexStorage: Sendable, Hashable {
    /// What never changes, in one object: an index is copied into every plan, walk and closure
    /// that reads it, and a copy of the fields themselves retained each of their three buffers,
    /// through a function of its own (a one-row fetch made about ten).
    private final class Fields: Sendable {
        let name: String
        let fieldPaths: [[String]]
        let database: Database

        init(name: String, fieldPaths: [[String]], database: Database) {
            self.name = name
            self.fieldPaths = fieldPaths
            self.database = database
        }
    }

    private let fields: Fields
    /// For a unique index, what an insert of values another record has does (see
    /// `UniqueConflictPolicy`); nil for an index records may share values of. Kept in the index's
    /// catalog entry.
    package var uniqueness: UniqueConflictPolicy? = nil

    /// The index's name: its field paths, dot-joined, comma-separated (`author,address.city`; see
    /// `FieldPath.name(of:)`).
    package var name: String { fields.name }
    package var fieldPaths: [[String]] { fields.fieldPaths }
    var database: Database { fields.database }

    init(name: String, fieldPaths: [[String]], database: Database, uniqueness: UniqueConflictPolicy? = nil) {
        fields = Fields(name: name, fieldPaths: fieldPaths, database: database)
        self.uniqueness = uniqueness
    }

    package static func == (lhs: IndexStorage, rhs: IndexStorage) -> Bool {
        (lhs.fields === rhs.fields
            || (lhs.name == rhs.name && lhs.fieldPaths == rhs.fieldPaths && lhs.database == rhs.database))
            && lhs.uniqueness == rhs.uniqueness
    }

    package func hash(into hasher: inout Hasher) {
        hasher.combine(name)
        hasher.combine(fieldPaths)
        hasher.combine(database)
        hasher.combine(uniqueness)
    }

    /// The bytes of a key the values may take together: 256, so that every integer and UUID
    /// identifier, and string identifiers up to 254 bytes, stay whole in the key; more only for
    /// indexes of more than 15 fields, whose values take at least 17 bytes each (a UUID's).
    private static let valuesBudget = 256

    static func databaseName(entity: String, index: String) -> String { "index:\(entity):\(index)" }
    static func catalogPrefix(entity: String) -> String { "index:\(entity):" }

    /// The catalog entry's value: the version byte (1), then, for a unique index, 1 (upsert) or 2
    /// (fail). A plain index's entry is the version byte alone, as before unique indexes.
    static func catalogValue(uniqueness: UniqueConflictPolicy?) -> [UInt8] {
        switch uniqueness {
        case nil: [1]
        case .upsert?: [1, 1]
        case .fail?: [1, 2]
        }
    }

    /// The uniqueness a catalog entry's value records.
    ///
    /// - Throws: `RillError(.corruptStore)` naming the index when the value is not one of `catalogValue`'s.
    static func uniqueness(
        fromCatalogValue raw: UnsafeRawBufferPointer, entity: String, index: String
    ) throws -> UniqueConflictPolicy? {
        switch Array(raw) {
        case [1]: return nil
        case [1, 1]: return .upsert
        case [1, 2]: return .fail
        default: throw RillError(.corruptStore, "the catalog entry of index \(entity)(\(index)) is unreadable")
        }
    }

    static func fieldPaths(fromName name: String) -> [[String]] { FieldPath.paths(fromName: name) }

    /// The most bytes of a string's, URL's or data's escaped payload this index's keys keep: an
    /// equal share of the values' budget for each field, less a value's tag and terminator.
    package var payloadLimit: Int { max(17, Self.valuesBudget / max(fieldPaths.count, 1)) - 3 }

    /// The entry of a record whose identifier key is `id`.
    ///
    /// - Throws: `RillError(.invalidConfiguration)` naming the index and the field when a value has
    ///   no key encoding (an array, a map); `RillError(.invalidRecord)` naming the record, the
    ///   index and how long each indexed value made the key, when the index has so many fields
    ///   that their values alone fill a key (values of any length fit an index of up to 29 fields).
    package func entry(for record: RecordValue, id: [UInt8], entity: String) throws -> IndexEntry {
        var values: [UInt8] = []
        values.reserveCapacity(32 + id.count)
        var cut = false
        let limit = payloadLimit
        for path in fieldPaths {
            do {
                if try IndexKey.append(QueryEvaluator.read(path, from: record), to: &values, payloadLimit: limit) {
                    cut = true
                }
            } catch {
                throw RillError(
                    .invalidConfiguration,
                    "the index \(entity)(\(name)) cannot hold the value of `\(path.joined(separator: "."))`: \(error)",
                    underlyingError: error)
            }
        }
        guard values.count < IndexEntry.maxKeySize else {
            let identifier =
                id.withUnsafeBytes { AnyIdentifier(storageKey: $0) }.map { "\($0)" } ?? "with a damaged id"
            // Each value's share of the key, for the message: the appends above, made again one by one.
            let sizes = fieldPaths.map { path -> Int in
                var alone: [UInt8] = []
                _ = try? IndexKey.append(QueryEvaluator.read(path, from: record), to: &alone, payloadLimit: limit)
                return alone.count
            }
            let fields = zip(fieldPaths, sizes).map { "`\($0.joined(separator: "."))` \($1) bytes" }
            throw RillError(
                .invalidRecord,
                "\(entity) \(identifier) does not fit the index \(entity)(\(name)): its key would be "
                    + "\(values.count + id.count) bytes (\(fields.joined(separator: ", ")), the identifier \(id.count)), "
                    + "and index keys hold at most \(IndexEntry.maxKeySize)")
        }
        return IndexEntry(values: values, hasCutValue: cut, id: id)
    }

    /// The length of the values part of a stored key, and where its first cut value ends (nil
    /// when no value is cut): keys that share the bytes up to there are in no particular order
    /// among themselves, since the values they were cut from differ beyond the cut.
    ///
    /// - Throws: `RillError(.corruptStore)` naming the index when the key is malformed.
    package func valuesExtent(of key: UnsafeRawBufferPointer, entity: String) throws -> (length: Int, cutEnd: Int?) {
        var offset = 0
        var cutEnd: Int?
        do {
            for _ in fieldPaths {
                if try IndexKey.skip(key, offset: &offset).isCut, cutEnd == nil { cutEnd = offset }
            }
        } catch {
            throw RillError(
                .corruptStore, "the index \(entity)(\(name)) holds a malformed key: \(error)", underlyingError: error)
        }
        return (offset, cutEnd)
    }

    /// The top-level fields the index reads; a change to none of them leaves its key as it was.
    var topLevelFields: Set<String> { Set(fieldPaths.compactMap(\.first)) }

    /// Whether the index reads one of the top-level `fields` (`topLevelFields`, without a set made).
    func reads(anyOf fields: [String]) -> Bool {
        fieldPaths.contains { path in path.first.map(fields.contains) ?? false }
    }
}
