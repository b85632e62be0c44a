/// The models that reference this one: the inverse side of a relationship, derived from the
/// references the other models store, never stored itself.
///
/// A relationship is stored once, on the side that holds the ``Reference``. The other side is a
/// `Related` property, declared as that reference's inverse with
/// `ModelRelationship.inverse(_:of:deleteRule:)`. It cannot disagree with the references,
/// because it is read from them (through the store's reference index) when a fetch prefetches it,
/// and while a predicate that looks through it is evaluated:
///
/// ```swift
/// struct Recipe: PersistentModel {
///     var id = UUID()
///     var name: String
///     var ingredients = Related<Ingredient>()
///
///     static let relationships: [ModelRelationship<Recipe>] = [
///         .inverse(\.ingredients, of: \Ingredient.recipe, deleteRule: .cascade)
///     ]
/// }
///
/// let withFlour = #Predicate<Recipe> { recipe in
///     recipe.ingredients.contains { $0.name.localizedStandardContains("flour") }
/// }
/// ```
///
/// Unless it was loaded, a `Related` value is empty and ``isLoaded`` is false. Changing it
/// changes nothing in the store: to relate two models, set the reference. Two values are always
/// equal, so a model's equality is that of what it stores.
public struct Related<Source: PersistentModel>: RandomAccessCollection, Codable, Hashable, Sendable {
    /// The referencing models, in identifier order, when loaded.
    public private(set) var models: [Source]
    /// Whether the models were read (by prefetching, or for a predicate).
    public private(set) var isLoaded: Bool

    /// Not loaded: no models.
    public init() {
        models = []
        isLoaded = false
    }

    /// Loaded with `models`.
    public init(_ models: [Source]) {
        self.models = models
        isLoaded = true
    }

    public var startIndex: Int { models.startIndex }
    public var endIndex: Int { models.endIndex }
    public subscript(position: Int) -> Source { models[position] }

    /// Decodes as not loaded, whatever the value: nothing of it is stored.
    public init(from decoder: any Decoder) throws {
        self.init()
    }

    /// Encodes as an empty list (Rill's own records leave the property out altogether).
    public func encode(to encoder: any Encoder) throws {
        _ = encoder.unkeyedContainer()
    }

    public static func == (lhs: Self, rhs: Self) -> Bool { true }

    public func hash(into hasher: inout Hasher) {}
}

/// A property type that Rill's records never store: the record encoder leaves it out, and the
/// record decoder gives its empty value when the record lacks it.
protocol UnstoredValue {
    static var unstoredValue: Self { get }
}

/// A value that stands for other records: a ``Reference`` or a ``Related``. A predicate that
/// reads through one reads other records than the one it tests.
protocol RelationshipValue {}

extension Related: RelationshipValue {}

extension Related: UnstoredValue {
    static var unstoredValue: Self { Self() }
}
