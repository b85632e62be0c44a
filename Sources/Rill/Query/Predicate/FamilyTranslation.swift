import Foundation

/// What translating a predicate over a family of model types knows of the family: the
/// discriminator, the kinds' names by type, and the stored fields the base's requirements read.
package struct FamilyTranslation: Sendable {
    /// The field that holds each record's kind name.
    let discriminator: String
    /// Each kind's type and name.
    let kinds: [(type: ObjectIdentifier, name: String)]
    /// The base type (the input type of the family's predicates).
    let base: ObjectIdentifier
    /// The field path of a key path on the base (a protocol requirement, whose key path has no
    /// name to read), when every kind stores it in the same field; nil otherwise.
    let requirementPath: @Sendable (AnyKeyPath) -> [String]?

    /// A key path as a table key. `@unchecked Sendable`: key path objects are immutable.
    struct KeyPathKey: Hashable, @unchecked Sendable {
        let keyPath: AnyKeyPath
    }

    /// The test that the record is of the kind whose type is `type`; nil when no kind is.
    func test(ofKind type: Any.Type) -> QueryNode? {
        let id = ObjectIdentifier(type)
        if id == base { return .literal(.bool(true)) }
        guard let kind = kinds.first(where: { $0.type == id }) else { return nil }
        return .compare(.equal, .field([discriminator]), .literal(.string(kind.name)))
    }

    /// The field path of `keyPath`, read from a value of the base type; nil when not known.
    func fieldPath(of keyPath: AnyKeyPath, root: Any.Type) -> [String]? {
        guard ObjectIdentifier(root) == base else { return nil }
        return requirementPath(keyPath)
    }
}
