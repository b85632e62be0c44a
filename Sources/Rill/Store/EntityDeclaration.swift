import RillStorage

/// What a save says an entity is: its identifier kind, the indexes it must have and, optionally, the kinds of
/// its fields (an import's entity description, or a model type's).
///
/// A save that carries declarations applies them in its own write transaction, before its changes
/// (`Store.commit(_:author:declaring:meanwhile:)`): the entity's catalog entry and projection are created when
/// the store lacks them, each index it lacks is created and built from the stored records, and the declared
/// field kinds are kept (`fields:<Entity>` in `meta`). A save that fails therefore leaves no entity, index or
/// declared field behind.
package struct EntityDeclaration: Sendable {
    package var name: String
    package var identifierKind: IdentifierKind
    /// The field paths of each index, in key order (`[["author"], ["address", "city"]]` for `author,address.city`).
    package var indexes: [[[String]]]
    /// The kinds of the entity's fields, kept for later writes given as JSON; nil to keep what the store has.
    package var fields: RecordShape?
    /// Where the declaration came from, for errors (`line 3 of books.ndjson`); nil when there is nothing to name.
    package var source: String?
    /// The schema of the model type that declares the entity (see `EntitySchema`); nil for none.
    package var schema: EntitySchema?
    /// The entity's relationships (see `RelationshipSchema`); nil to keep what the store has.
    package var relationships: [RelationshipSchema]?
    /// Which of the declared indexes are unique, by index name (`email`, `city,zip`), with their policies: the
    /// declared indexes it does not name are made plain. Nil to keep each index's uniqueness as the store has it
    /// (a description that does not say), making the declared indexes the store lacks plain.
    package var uniqueness: [String: UniqueConflictPolicy]?
    /// Runs first when the declaration is applied, in the save's write transaction: a check
    /// that aborts the save by throwing, and what it writes is part of the save (a migration's
    /// record that it ran: see `Store+Migration.swift`). Nil for none.
    package var whenApplied: (@Sendable (WriteTransaction) throws -> Void)?

    /// A declaration of `name`.
    ///
    /// - Throws: `RillError(.invalidConfiguration)` when an index names an empty key path.
    package init(
        name: String, identifierKind: IdentifierKind, indexes: [[[String]]] = [], fields: RecordShape? = nil,
        source: String? = nil
    ) throws {
        for paths in indexes where paths.isEmpty || paths.contains(where: \.isEmpty) {
            throw RillError(
                .invalidConfiguration,
                "an index of \(name) names a key path that is not a chain of stored properties")
        }
        self.name = name
        self.identifierKind = identifierKind
        self.indexes = indexes
        // A description need not list the identifier: every record has one, of the entity's kind.
        self.fields = fields?.withIdentifier(identifierKind)
        self.source = source
    }

    /// The catalog names of the declared indexes (`author,address.city`), in declaration order.
    var indexNames: [String] { indexes.map(FieldPath.name(of:)) }

    /// The catalog name of the index on `paths`.
    static func indexName(_ paths: [[String]]) -> String { FieldPath.name(of: paths) }

    /// This declaration followed by `later`, a second description of the same entity in one save: the indexes of
    /// both, and `later`'s field kinds over these (a field declared first keeps its place).
    func followed(by later: EntityDeclaration) -> EntityDeclaration {
        var combined = later
        combined.indexes = indexes + later.indexes.filter { index in !indexes.contains(index) }
        if let first = uniqueness { combined.uniqueness = first.merging(later.uniqueness ?? [:]) { $1 } }
        switch (fields, later.fields) {
        case (let first?, let second?): combined.fields = second.merged(with: first).ordered(like: first)
        case (let first?, nil): combined.fields = first
        default: break
        }
        return combined
    }
}
