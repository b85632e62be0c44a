import Foundation

/// Model types that are kinds of one base model: stored together, fetched together (deep) or one
/// kind alone (shallow).
///
/// Value types have no subclasses, so a hierarchy is a protocol and the structs that conform to
/// it. The protocol is the base; each struct is a kind. A family lists the kinds and names the
/// entity they share: one set of records, one identifier space, one set of indexes. Each record
/// stores the name of its kind in a field of its own, the discriminator (`kind` by default),
/// which saves write and every read of the family goes by.
///
/// For example:
///
/// ```swift
/// protocol Recipe: PersistentModel where ID == UUID {
///     var name: String { get }
/// }
///
/// extension Recipe {
///     static var family: ModelFamily? { .recipes }
/// }
///
/// extension ModelFamily {
///     static let recipes = ModelFamily(
///         of: (any Recipe).self, entityName: "Recipe", kinds: BakedGood.self, Beverage.self)
/// }
///
/// struct BakedGood: Recipe { var id = UUID(); var name: String; var minutes: Int }
/// struct Beverage: Recipe { var id = UUID(); var name: String; var caffeinated: Bool }
///
/// let container = try ModelContainer(for: BakedGood.self, Beverage.self, configurations: …)
/// let quick = try context.fetch(FetchDescriptor<BakedGood>(predicate: #Predicate { $0.minutes < 30 }))
/// let all: [any Recipe] = try context.fetch(
///     FamilyDescriptor<any Recipe>(predicate: #Predicate { $0 is BakedGood || $0.name == "Tea" }))
/// ```
///
/// A `FetchDescriptor` or `LiveQuery` of one kind is shallow: it gives the records of that kind
/// only. A ``FamilyDescriptor`` (and a ``FamilyLiveQuery``) is deep: every kind, each record
/// decoded as the kind it names, as a value of the base. In a deep predicate, `$0 is BakedGood`
/// tests the discriminator, `($0 as? BakedGood)?.minutes` reads a field of one kind, and the
/// base protocol's requirements (`$0.name`) read the field every kind stores them in.
///
/// Every kind must have the same identifier type (the base protocol's `where ID == …` says so),
/// its entity name is the family's (the default ``PersistentModel/entityName`` gives it), and it
/// must not have a field named as the discriminator. The kinds of a family share the entity's
/// relationships, so each declares the same ones (a deep predicate may look through them; a deep
/// live query follows its own records' changes, not those of related models). The kinds of a
/// family cannot declare unique indexes or migrations (`.migrated(from:)`) yet: the container
/// refuses them.
public struct ModelFamily: Sendable {
    /// One kind of a family: its name, as records store it in the discriminator, and its type.
    public struct Kind: Sendable {
        /// The discriminator's value for records of this kind.
        public let name: String
        /// The model type.
        public let type: any PersistentModel.Type
    }

    /// The entity every kind is stored in.
    public let entityName: String
    /// The field that holds each record's kind name.
    public let discriminator: String
    /// The kinds, in the order given.
    public let kinds: [Kind]
    /// The base type (`(any Recipe).self`), by which deep descriptors find the family.
    let base: ObjectIdentifier
    /// The base type's name, for messages.
    let baseName: String

    /// A family of the given kinds, each named as its type is (`"BakedGood"`).
    ///
    /// - Parameters:
    ///   - base: the base type, the existential of the protocol the kinds conform to
    ///     (`(any Recipe).self`); deep fetches (``FamilyDescriptor``) of it read this family.
    ///   - entityName: the entity the kinds share. Keep it stable across releases of an app.
    ///   - discriminator: the field that stores each record's kind; `kind` by default.
    ///   - kinds: the model types of the family.
    public init<Base>(
        of base: Base.Type, entityName: String, discriminator: String = "kind", kinds: any PersistentModel.Type...
    ) {
        self.init(
            of: base, entityName: entityName, discriminator: discriminator,
            named: kinds.map { (String(describing: $0), $0) })
    }

    /// A family of the given kinds, each stored under the name given (so that a type can be
    /// renamed without rewriting its records).
    ///
    /// For example: `ModelFamily(of: (any Recipe).self, entityName: "Recipe", namedKinds: ["baked": BakedGood.self])`.
    public init<Base>(
        of base: Base.Type, entityName: String, discriminator: String = "kind",
        namedKinds: KeyValuePairs<String, any PersistentModel.Type>
    ) {
        self.init(of: base, entityName: entityName, discriminator: discriminator, named: namedKinds.map { ($0, $1) })
    }

    private init<Base>(
        of base: Base.Type, entityName: String, discriminator: String, named: [(String, any PersistentModel.Type)]
    ) {
        self.entityName = entityName
        self.discriminator = discriminator
        self.kinds = named.map { Kind(name: $0.0, type: $0.1) }
        self.base = ObjectIdentifier(base)
        self.baseName = String(describing: base)
    }

    // MARK: - Kinds

    /// The kind whose type is `type`, or nil.
    func kind(of type: Any.Type) -> Kind? {
        let id = ObjectIdentifier(type)
        return kinds.first { ObjectIdentifier($0.type) == id }
    }

    /// The kind stored as `name`, or nil.
    func kind(named name: String) -> Kind? {
        kinds.first { $0.name == name }
    }

    /// The test that a record is of the kind `name`: its discriminator holds the name.
    func test(kind name: String) -> QueryNode {
        .compare(.equal, .field([discriminator]), .literal(.string(name)))
    }

    /// The catalog name of the discriminator's index, which every family's entity has.
    var discriminatorIndex: [[String]] { [[discriminator]] }

    /// What is wrong with the family, for the container to refuse it: no kinds, two kinds of one
    /// name or type, a kind of another entity or identifier type, a kind with a field named as
    /// the discriminator.
    var problems: [String] {
        var problems: [String] = []
        if kinds.isEmpty { problems.append("family \(entityName) has no kinds") }
        var names: Set<String> = []
        var types: Set<ObjectIdentifier> = []
        for kind in kinds {
            if !names.insert(kind.name).inserted {
                problems.append("two kinds of \(entityName) are named \(kind.name)")
            }
            if !types.insert(ObjectIdentifier(kind.type)).inserted {
                problems.append("\(kind.type) is listed twice in family \(entityName)")
            }
            if kind.type.entityName != entityName {
                problems.append(
                    "\(kind.type) is a kind of \(entityName), but its entity name is \(kind.type.entityName)")
            }
            if kind.type.family?.entityName != entityName {
                problems.append("\(kind.type)'s family is not \(entityName): its `static var family` must return it")
            }
            if kind.type.identifierTypeName != kinds[0].type.identifierTypeName {
                problems.append(
                    "the kinds of \(entityName) have different identifier types: \(kinds[0].type) "
                        + "\(kinds[0].type.identifierTypeName), \(kind.type) \(kind.type.identifierTypeName)")
            }
            // Not yet for the kinds of a family: a unique index would span every kind.
            if !kind.type.uniqueIndexes.isEmpty {
                problems.append("\(kind.type) declares a unique index; the kinds of a family cannot yet")
            }
            // The entity's relationships are the family's: every kind must say the same.
            if Set(kind.type.relationshipSchemas) != Set(kinds[0].type.relationshipSchemas) {
                problems.append(
                    "\(kind.type) declares other relationships than \(kinds[0].type); the kinds of a family "
                        + "must declare the same ones")
            }
            if kind.type.declaresMigrations {
                problems.append("\(kind.type) declares a migration; the kinds of a family cannot yet")
            }
            if case .map(let fields)? = kind.type.probedSchema?.kinds,
                fields.contains(where: { $0.name == discriminator })
            {
                problems.append("\(kind.type) has a field `\(discriminator)`, the family's discriminator")
            }
        }
        return problems
    }
}
