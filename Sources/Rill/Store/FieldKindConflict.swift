/// A field that an entity description declares as one kind while the store holds it as another: in a
/// stored record, or in the schema a model type registered for the entity.
///
/// The underlying error of the `RillError(.invalidConfiguration)` that refuses such a description
/// (`rill import`): writes given as JSON store each field as its declared kind, so the entity would
/// then hold both kinds, and an export of it would not import again.
package struct FieldKindConflict: Error, Sendable, Equatable, CustomStringConvertible {
    /// Where the store holds the other kind.
    package enum Holder: Sendable, Equatable {
        /// The stored record with this identifier.
        case record(String)
        /// The current schema a model type registered, of this version.
        case schema(version: UInt64)
    }

    package let entity: String
    /// The field's dotted path (`name`, `address.city`, `tags[]` for an array's elements).
    package let field: String
    /// The kind the description gives the field, and the kind the store holds, in the words of
    /// `rill schema` (`int`, `[string]`, `a nested struct`).
    package let declaredKind: String
    package let foundKind: String
    package let foundIn: Holder

    package var description: String {
        switch foundIn {
        case .record(let id):
            "\(entity).\(field) is declared \(declaredKind), but record \(id) holds \(foundKind) there"
        case .schema(let version):
            "\(entity).\(field) is declared \(declaredKind), but schema version \(version), registered by a model "
                + "type, reads it as \(foundKind)"
        }
    }
}
