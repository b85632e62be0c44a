/// A relationship of a model type: a reference it stores, or the inverse of another model's
/// reference, with what happens to the related models when one is deleted.
///
/// Declare a model's relationships in its static `relationships` property. A relationship is
/// stored once, as a ``Reference`` (to-one) or an array of them (to-many) on one side; the other
/// side, when the model wants it, is a ``Related`` property declared as its inverse:
///
/// ```swift
/// struct Recipe: PersistentModel {
///     var id = UUID()
///     var name: String
///     var ingredients = Related<Ingredient>()
///     var tags: [Reference<Tag>] = []
///
///     static let relationships: [ModelRelationship<Recipe>] = [
///         .inverse(\.ingredients, of: \Ingredient.recipe, deleteRule: .cascade),
///         .references(\.tags),
///     ]
/// }
/// ```
///
/// Rill keeps an index of every reference, in the save's transaction, and uses it to read an
/// inverse, to find what a delete affects, and to tell live queries whose predicates look through
/// a relationship that a related model changed.
///
/// What a delete does to the models that reference the deleted one is the `deleteRule` of the
/// inverse that the deleted model's type declares, or ``RelationshipDeleteRule/nullify`` when it declares
/// none. A reference's own `deleteRule` says what deleting the referencing model does to the
/// models it references: nothing (``RelationshipDeleteRule/nullify``, the default) or ``RelationshipDeleteRule/cascade``.
public struct ModelRelationship<Model: PersistentModel>: Sendable {
    /// What deleting a model does to the models related to it.
    public typealias DeleteRule = RelationshipDeleteRule

    /// How the relationship is kept, as the store knows it.
    let schema: RelationshipSchema
    /// Sets the relationship of one model to what `loader` reads: the referenced models, or
    /// those that reference it.
    let resolve: @Sendable (inout Model, RelationshipLoader) throws -> Void

    /// A to-one reference, optional: `var recipe: Reference<Recipe>?`.
    ///
    /// `deleteRule` says what deleting this model does to the one it references:
    /// ``RelationshipDeleteRule/nullify`` (nothing) or ``RelationshipDeleteRule/cascade`` (delete it too).
    public static func reference<Target: PersistentModel>(
        _ keyPath: WritableKeyPath<Model, Reference<Target>?> & Sendable, deleteRule: DeleteRule = .nullify
    ) -> Self {
        Self(
            keyPath, .reference, other: Target.entityName, deleteRule: deleteRule,
            resolve: { model, loader in
                guard let reference = model[keyPath: keyPath] else { return }
                model[keyPath: keyPath] = try loader.resolve(reference)
            })
    }

    /// A to-one reference that every model has: `var recipe: Reference<Recipe>`. Deleting the
    /// referenced model fails unless the inverse's rule cascades.
    public static func reference<Target: PersistentModel>(
        _ keyPath: WritableKeyPath<Model, Reference<Target>> & Sendable, deleteRule: DeleteRule = .nullify
    ) -> Self {
        Self(
            keyPath, .requiredReference, other: Target.entityName, deleteRule: deleteRule,
            resolve: { model, loader in model[keyPath: keyPath] = try loader.resolve(model[keyPath: keyPath]) })
    }

    /// A to-many reference: `var tags: [Reference<Tag>]`.
    public static func references<Target: PersistentModel>(
        _ keyPath: WritableKeyPath<Model, [Reference<Target>]> & Sendable, deleteRule: DeleteRule = .nullify
    ) -> Self {
        Self(
            keyPath, .references, other: Target.entityName, deleteRule: deleteRule,
            resolve: { model, loader in
                model[keyPath: keyPath] = try model[keyPath: keyPath].map { try loader.resolve($0) }
            })
    }

    /// The inverse of a to-one reference of another model: the models whose reference names
    /// this one.
    ///
    /// `deleteRule` says what deleting this model does to the models that reference it.
    public static func inverse<Source: PersistentModel>(
        _ keyPath: WritableKeyPath<Model, Related<Source>> & Sendable, of reference: KeyPath<Source, Reference<Model>?>,
        deleteRule: DeleteRule = .nullify
    ) -> Self {
        inverse(keyPath, source: FieldPath.components(of: reference, root: Source.self), deleteRule: deleteRule)
    }

    /// The inverse of a required to-one reference of another model.
    public static func inverse<Source: PersistentModel>(
        _ keyPath: WritableKeyPath<Model, Related<Source>> & Sendable, of reference: KeyPath<Source, Reference<Model>>,
        deleteRule: DeleteRule = .nullify
    ) -> Self {
        inverse(keyPath, source: FieldPath.components(of: reference, root: Source.self), deleteRule: deleteRule)
    }

    /// The inverse of a to-many reference of another model (a many-to-many relationship when the
    /// other side is to-many too).
    public static func inverse<Source: PersistentModel>(
        _ keyPath: WritableKeyPath<Model, Related<Source>> & Sendable,
        of references: KeyPath<Source, [Reference<Model>]>,
        deleteRule: DeleteRule = .nullify
    ) -> Self {
        inverse(keyPath, source: FieldPath.components(of: references, root: Source.self), deleteRule: deleteRule)
    }

    private static func inverse<Source: PersistentModel>(
        _ keyPath: WritableKeyPath<Model, Related<Source>> & Sendable, source: [String]?, deleteRule: DeleteRule
    ) -> Self {
        let sourceField = source?.count == 1 ? source![0] : ""
        return Self(
            keyPath, .inverse, other: Source.entityName, otherField: sourceField, deleteRule: deleteRule,
            resolve: { model, loader in
                model[keyPath: keyPath] = try loader.referrers(
                    of: Model.entityName, key: model.id.storageKey, as: Source.self, field: sourceField)
            })
    }

    private init(
        _ keyPath: AnyKeyPath, _ kind: RelationshipSchema.Kind, other: String, otherField: String? = nil,
        deleteRule: DeleteRule,
        resolve: @escaping @Sendable (inout Model, RelationshipLoader) throws -> Void
    ) {
        let path = FieldPath.components(of: keyPath, root: Model.self)
        schema = RelationshipSchema(
            field: path?.count == 1 ? path![0] : "", kind: kind, entity: other, inverseOf: otherField,
            deleteRule: deleteRule)
        self.resolve = resolve
    }

    /// What is wrong with the declaration, for the container to report; nil when nothing is.
    var problem: String? {
        if schema.field.isEmpty {
            return "a relationship of \(Model.entityName) must be a top-level stored property"
        }
        if schema.kind == .inverse, schema.inverseOf?.isEmpty != false {
            return "the inverse \(Model.entityName).\(schema.field) must name a top-level reference of \(schema.entity)"
        }
        if schema.kind != .inverse, schema.deleteRule == .deny {
            return
                "the reference \(Model.entityName).\(schema.field) cannot deny: a rule that denies belongs to an inverse"
        }
        return nil
    }
}
