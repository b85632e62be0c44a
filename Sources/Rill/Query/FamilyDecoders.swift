import Foundation

/// Decodes a stored record of a family as the kind its discriminator names, as a value of the
/// family's base.
///
/// The discriminator is data: a record written through JSON, or by a newer version of the app
/// with a kind this one does not know, may name no kind of the family. Such a record is an
/// error (`.decodingFailed`, naming the record and the kind), as a record that does not decode
/// is: a fetch does not answer with fewer records than match. A predicate that tests the kind
/// (`$0 is BakedGood`) decides on the stored record first, so such a record does not reach it.
struct FamilyDecoders<Base> {
    private let family: ModelFamily
    private let decoders: [String: (UnsafeRawBufferPointer) throws -> Base]
    /// Each kind's reader of the relationships of one of its models (see `resolved(_:loader:)`).
    private let resolvers: [ObjectIdentifier: (Base, RelationshipLoader) throws -> Base]
    private let fields: Set<String>
    /// Whether the kinds have relationships (they all declare the same ones).
    let hasRelationships: Bool

    init(_ family: ModelFamily) {
        self.family = family
        var decoders: [String: (UnsafeRawBufferPointer) throws -> Base] = [:]
        var resolvers: [ObjectIdentifier: (Base, RelationshipLoader) throws -> Base] = [:]
        for kind in family.kinds {
            decoders[kind.name] = Self.decoder(kind.type)
            resolvers[ObjectIdentifier(kind.type)] = Self.resolver(kind.type)
        }
        self.decoders = decoders
        self.resolvers = resolvers
        hasRelationships = family.kinds.contains { !$0.type.relationshipSchemas.isEmpty }
        self.fields = [family.discriminator]
    }

    private static func decoder<K: PersistentModel>(_ type: K.Type) -> (UnsafeRawBufferPointer) throws -> Base {
        { bytes in
            let model = try K.decodeStored(from: bytes)
            guard let base = model as? Base else {
                throw RillError(.invalidConfiguration, "\(K.self) is a kind of its family but not a \(Base.self)")
            }
            return base
        }
    }

    private static func resolver<K: PersistentModel>(_ type: K.Type) -> (Base, RelationshipLoader) throws -> Base {
        let relationships = K.relationships
        return { base, loader in
            guard var model = base as? K, !relationships.isEmpty else { return base }
            for relationship in relationships { try relationship.resolve(&model, loader) }
            return model as? Base ?? base
        }
    }

    /// `model` with every relationship of its kind read by `loader`: what a deep predicate that is
    /// not translated completely is evaluated on, since it may look through any of them.
    func resolved(_ model: Base, loader: RelationshipLoader) throws -> Base {
        guard let resolve = resolvers[ObjectIdentifier(type(of: model as Any))] else { return model }
        return try resolve(model, loader)
    }

    /// The model of the stored record `bytes` with identifier key `key`.
    ///
    /// - Throws: `RillError(.decodingFailed)` when the record names no kind of the family, or
    ///   does not decode as the kind it names.
    func decode(_ bytes: UnsafeRawBufferPointer, key: UnsafeRawBufferPointer) throws -> Base {
        let record = try Store.recordValue(bytes, key: key, entity: family.entityName, fields: fields)
        var name: String?
        if case .map(let values) = record,
            case .string(let kind)? = values.first(where: { $0.name == family.discriminator })?.value
        {
            name = kind
        }
        guard let name, let decoder = decoders[name] else {
            let id = AnyIdentifier(storageKey: key).map { "\($0)" } ?? "?"
            throw RillError(
                .decodingFailed,
                "the stored \(family.entityName) \(id) names "
                    + (name.map { "kind \"\($0)\"" } ?? "no kind") + " in `\(family.discriminator)`; the family's "
                    + "kinds are " + family.kinds.map(\.name).joined(separator: ", "))
        }
        do {
            return try decoder(bytes)
        } catch let error as RillError {
            throw error
        } catch {
            let id = AnyIdentifier(storageKey: key).map { "\($0)" } ?? "?"
            throw RillError(
                .decodingFailed,
                "the stored \(family.entityName) \(id) does not decode as \(name): \(ModelContext.describe(error))",
                underlyingError: error)
        }
    }

    /// `decode(_:key:)` of a record held in arrays.
    func decode(_ bytes: [UInt8], key: [UInt8]) throws -> Base {
        try bytes.withUnsafeBytes { bytes in try key.withUnsafeBytes { try decode(bytes, key: $0) } }
    }
}
