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
    /// The kinds probed, to learn what a key path with no name reads and which kinds are of a
    /// type; nil when some kind refuses the probe.
    let probe: FamilyProbe?

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

    /// The test that the record is of a kind whose values are `Desired`s (a protocol some
    /// kinds conform to): nil when the kinds were not probed. A struct's type decides whether it
    /// is a `Desired`, not its values, so a probe of each kind answers for all its records.
    func test<Desired>(ofKindsThatAre type: Desired.Type) -> QueryNode? {
        guard let probe else { return nil }
        let names = probe.kindIndexes { $0 is Desired }.map { kinds[$0].name }
        let field = QueryNode.field([discriminator])
        switch names.count {
        case 0: return .literal(.bool(false))
        case 1: return .compare(.equal, field, .literal(.string(names[0])))
        default: return .isIn(field, names.map { .literal(.string($0)) })
        }
    }

    /// The field path of `keyPath` (one with no name to read: a protocol requirement, a
    /// computed property) read from the record itself as a `Root` — the base, a kind, or a
    /// protocol some kinds conform to — when every such kind reads one stored field; nil
    /// otherwise.
    func fieldPath<Root>(of keyPath: AnyKeyPath, root: Root.Type) -> [String]? {
        probe?.fieldPath(of: keyPath, root: Root.self)
    }
}
