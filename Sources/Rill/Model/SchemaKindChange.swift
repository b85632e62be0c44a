/// A field whose kind differs between the store's schema and a model's: what no evolution reads
/// automatically, and what a ``ModelEvolution/Step/migrated(from:_:)`` step migrates.
///
/// It is the ``RillError/underlyingError`` of a ``RillError/Code/migrationRequired`` error, thrown
/// when a container opens a store for a model with such a change and no migration for it:
///
/// ```swift
/// do {
///     _ = try ModelContainer(for: Task.self, configurations: configuration)
/// } catch let error as RillError where error.code == .migrationRequired {
///     let change = error.underlyingError as? SchemaKindChange
///     print(change?.field, change?.storedKind, change?.modelKind)  // priority string int
/// }
/// ```
public struct SchemaKindChange: Error, Sendable, Equatable, CustomStringConvertible {
    /// The entity whose field changed kind.
    public let entity: String
    /// The field's dotted path, as the model names it (`priority`, `address.zip`).
    public let field: String
    /// The version of the store's current schema, and the kind it records for the field.
    public let storedVersion: UInt64
    public let storedKind: String
    /// The version of the model's schema (the one it is, or would be, registered as) and the
    /// kind it reads the field as.
    public let modelVersion: UInt64
    public let modelKind: String

    package init(
        entity: String, field: String, storedVersion: UInt64, storedKind: String, modelVersion: UInt64,
        modelKind: String
    ) {
        self.entity = entity
        self.field = field
        self.storedVersion = storedVersion
        self.storedKind = storedKind
        self.modelVersion = modelVersion
        self.modelKind = modelKind
    }

    public var description: String {
        "\(entity).\(field) is \(storedKind) in schema version \(storedVersion) and \(modelKind) in version \(modelVersion)"
    }
}
