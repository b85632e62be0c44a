import RillLocks

/// A type whose values Rill stores: a `Codable` value type with a stable identifier.
///
/// Conform a `struct` and give it an `id` of type `UUID`, `String`, `Int` or `Int64`. Each
/// save records every inserted, updated or deleted model in the log, and keeps the latest
/// version of each model, by `id`, in the store.
///
/// For example:
///
/// ```swift
/// struct Book: PersistentModel {
///     var id = UUID()
///     var title: String
///     var author: String
///     var isRead = false
/// }
/// ```
///
/// The stored field names are the model's coding keys, so renaming a property (or its coding
/// key) renames the stored field.
public protocol PersistentModel: Codable, Identifiable, Sendable where ID: ModelIdentifier {
    /// The name under which the model's records are stored. Default: the type's name, or the
    /// entity name of its ``family``.
    ///
    /// Two model types with the same entity name share one set of records, so keep it stable
    /// across releases of an app, and distinct across its models.
    static var entityName: String { get }

    /// The model's indexes. Default: none. See ``ModelIndex``.
    static var indexes: [ModelIndex<Self>] { get }

    /// How records written by earlier versions of the model read as this one: fields added
    /// with a default value, fields renamed. Default: none. See ``ModelEvolution``.
    static var evolution: ModelEvolution<Self> { get }

    /// The model's relationships: the references it stores and the inverses it reads. Default:
    /// none. See ``ModelRelationship``.
    static var relationships: [ModelRelationship<Self>] { get }

    /// The family the model is one kind of, stored in the family's entity with its kind's name
    /// in the discriminator. Default: nil, a model with an entity of its own. See ``ModelFamily``.
    static var family: ModelFamily? { get }

    /// Reads the model from its stored record. Default: through `Decodable`
    /// (`try record.decode(as: Self.self)`).
    ///
    /// Implement it to read each field by name instead, which makes fetches of many models
    /// faster (see ``ModelRecord``). It must read what the model's `Encodable` conformance
    /// writes.
    init(record: borrowing ModelRecord) throws
}

extension PersistentModel {
    public static var entityName: String { family?.entityName ?? EntityNames.name(of: Self.self) }

    public static var indexes: [ModelIndex<Self>] { [] }

    public static var evolution: ModelEvolution<Self> { ModelEvolution() }

    public static var relationships: [ModelRelationship<Self>] { [] }

    public static var family: ModelFamily? { nil }

    public init(record: borrowing ModelRecord) throws {
        self = try record.decode(as: Self.self)
    }
}

/// Type names, computed once: `String(describing:)` is too slow for every insert.
private enum EntityNames {
    static let cache = Lock<[ObjectIdentifier: String]>([:])

    static func name(of type: Any.Type) -> String {
        let key = ObjectIdentifier(type)
        if let name = cache.withLock({ $0[key] }) { return name }
        let name = String(describing: type)
        cache.withLock { $0[key] = name }
        return name
    }
}
