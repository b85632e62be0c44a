/// A stored reference from one model to another: the other model's identifier, and, once it has
/// been read, the model itself.
///
/// A reference is how one model points at another. A to-one relationship is a property of type
/// `Reference<Target>?` (or `Reference<Target>` when it is required), a to-many one a property of
/// type `[Reference<Target>]`. The record stores only the identifier, so a reference is as small
/// as an identifier and never a copy that goes stale:
///
/// ```swift
/// struct Ingredient: PersistentModel {
///     var id = UUID()
///     var name: String
///     var recipe: Reference<Recipe>?
///
///     static let relationships: [ModelRelationship<Ingredient>] = [.reference(\.recipe)]
/// }
///
/// let flour = Ingredient(name: "flour", recipe: Reference(bread))
/// ```
///
/// ``model`` holds the referenced model when the fetch that read this one was asked to prefetch
/// it (``FetchDescriptor/relationshipKeyPathsForPrefetching``), and while a predicate that looks
/// through the reference is evaluated; otherwise it is nil. Two references are equal when they
/// name the same identifier, whatever their ``model``.
public struct Reference<Target: PersistentModel>: Codable, Hashable, Sendable {
    /// The identifier of the referenced model.
    public var id: Target.ID
    /// The referenced model, when it was read with this one; nil otherwise. Never stored.
    ///
    /// Held in a box of its own, so that a model may refer to models of its own type (a
    /// `parent: Reference<Category>?` in a `Category`), which a stored `Target?` would make a
    /// type that contains itself.
    public var model: Target? {
        get { loaded?.model }
        set { loaded = newValue.map(LoadedModel.init) }
    }

    private var loaded: LoadedModel<Target>?

    /// A reference to the model with identifier `id`.
    public init(_ id: Target.ID) {
        self.id = id
    }

    /// A reference to `model`.
    public init(_ model: Target) {
        self.id = model.id
        self.loaded = LoadedModel(model)
    }

    public init(from decoder: any Decoder) throws {
        id = try decoder.singleValueContainer().decode(Target.ID.self)
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        try container.encode(id)
    }

    public static func == (lhs: Self, rhs: Self) -> Bool { lhs.id == rhs.id }

    public func hash(into hasher: inout Hasher) { hasher.combine(id) }
}

/// The model a reference read, out of line (see `Reference.model`).
private final class LoadedModel<Target: PersistentModel>: Sendable {
    let model: Target

    init(_ model: Target) { self.model = model }
}

/// A reference of any target type, for code that reads references without knowing their types.
protocol AnyModelReference: RelationshipValue {
    /// `\Reference<Target>.id`.
    static var identifierKeyPath: AnyKeyPath { get }
}

extension Reference: AnyModelReference {
    static var identifierKeyPath: AnyKeyPath { \Reference<Target>.id }
}
