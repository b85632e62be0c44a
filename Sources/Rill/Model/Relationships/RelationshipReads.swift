import Foundation

/// The relationships a predicate looks through: the model's top-level relationship fields that
/// a key path of the predicate reads a ``Reference`` or ``Related`` from.
///
/// Found by walking the predicate's expression tree once, when the predicate is prepared for a
/// fetch or a live query, and only for model types with relationships.
enum RelationshipReads {
    /// The names of `T`'s relationship fields `predicate` reads.
    static func fields<T: PersistentModel>(of predicate: Predicate<T>, in type: T.Type) -> Set<String> {
        let names = Set(T.relationships.map(\.schema.field))
        guard !names.isEmpty else { return [] }
        var found: Set<String> = []
        visit(predicate.expression, names: names, root: T.self, into: &found, depth: 0)
        return found
    }

    private static func visit(
        _ node: Any, names: Set<String>, root: Any.Type, into found: inout Set<String>, depth: Int
    ) {
        // Expression trees are shallow; the bound keeps a pathological one from recursing without end.
        guard depth < 64 else { return }
        if let read = node as? any RootKeyPathRead, let name = read.readFieldName(root: root), names.contains(name) {
            found.insert(name)
        }
        for child in Mirror(reflecting: node).children {
            visit(child.value, names: names, root: root, into: &found, depth: depth + 1)
        }
    }
}

/// A key path expression, as the walk sees it.
private protocol RootKeyPathRead {
    func readFieldName(root: Any.Type) -> String?
}

extension PredicateExpressions.KeyPath: RootKeyPathRead {
    /// The first field name of a key path from the model type, when it reads a relationship value.
    fileprivate func readFieldName(root: Any.Type) -> String? {
        guard Root.Output.self == root,
            Output.self is any RelationshipValue.Type || Output.self is any RelationshipContainer.Type
        else { return nil }
        return KeyPathNames.names(of: keyPath, root: root)?.first
    }
}

/// `Reference<T>?` and `[Reference<T>]`, whose elements stand for other records.
private protocol RelationshipContainer {}

extension Optional: RelationshipContainer where Wrapped: RelationshipValue {}

extension Array: RelationshipContainer where Element: RelationshipValue {}
