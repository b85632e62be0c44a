/// The model types of a container, named together, as SwiftData's `Schema` names them.
///
/// A container made for a schema stores its types; a configuration may carry one too, and the
/// container then stores those types as well. For example, the setup SwiftData's app template
/// writes:
///
/// ```swift
/// let schema = Schema([Book.self, Author.self])
/// let configuration = ModelConfiguration(schema: schema, isStoredInMemoryOnly: false)
/// let container = try ModelContainer(for: schema, configurations: [configuration])
/// ```
///
/// The store records each type's fields itself when a container opens it (see ``ModelContainer``,
/// and `rill schema`); how a type changes between versions is its own ``PersistentModel/evolution``
/// and migrations, not a versioned schema.
public struct Schema: Sendable, Hashable {
    /// The model types, in the order given, each once.
    public let types: [any PersistentModel.Type]

    /// A schema of `types`.
    public init(_ types: [any PersistentModel.Type]) {
        var unique: [any PersistentModel.Type] = []
        for type in types where !unique.contains(where: { $0 == type }) { unique.append(type) }
        self.types = unique
    }

    /// A schema of `types`.
    public init(_ types: any PersistentModel.Type...) {
        self.init(types)
    }

    public static func == (lhs: Schema, rhs: Schema) -> Bool {
        lhs.types.count == rhs.types.count && zip(lhs.types, rhs.types).allSatisfy { $0 == $1 }
    }

    public func hash(into hasher: inout Hasher) {
        for type in types { hasher.combine(ObjectIdentifier(type)) }
    }
}

extension ModelContainer {
    /// Opens (or creates) the store described by `configurations` for the types of `schema`.
    ///
    /// - Parameters:
    ///   - schema: the model types to store.
    ///   - configurations: one configuration; with none, the default store.
    ///   - progress: told how far the index builds of this call have come (see ``StoreProgress``).
    /// - Throws: ``RillError`` when the store cannot be opened, as the initializers given the types do.
    public convenience init(
        for schema: Schema, configurations: [ModelConfiguration] = [],
        progress: (@Sendable (StoreProgress) -> Void)? = nil
    ) throws {
        try self.init(for: schema.types, configurations: configurations, progress: progress)
    }

    /// Opens (or creates) the store described by `configurations` for the types of `schema`.
    public convenience init(
        for schema: Schema, configurations: ModelConfiguration..., progress: (@Sendable (StoreProgress) -> Void)? = nil
    ) throws {
        try self.init(for: schema.types, configurations: configurations, progress: progress)
    }

    /// The container's model types as a schema.
    public var schema: Schema { Schema(modelTypes) }
}
