import Foundation
import RillLocks

/// The stored field names a key path reads, derived from its description
/// (`\Book.address.city` → `["address", "city"]`) and checked against what the type stores
/// (`StoredFieldProbe`: a property its coding keys store under another name reads that name).
package enum KeyPathNames {
    /// What a key path reads on strings and arrays without naming a stored field.
    package enum Measure: Sendable {
        /// `count`: the number of elements (characters of a string).
        case count
        /// `isEmpty`: whether the count is zero.
        case isEmpty
    }

    /// The property names of `keyPath` from `root`, nil unless every component is a plainly
    /// named stored property (computed properties print as `<computed …>` and are refused).
    /// Optional chaining and forced unwrapping marks are dropped: a field read through a missing
    /// value reads as null, as the chain gives nil.
    package static func names(of keyPath: AnyKeyPath, root: Any.Type) -> [String]? {
        resolved(keyPath, root: root).names
    }

    /// `count` or `isEmpty` of a String or an Array, which read no field.
    package static func measure(of keyPath: AnyKeyPath, root: Any.Type) -> Measure? {
        resolved(keyPath, root: root).measure
    }

    /// What a key path from a relationship value (a `Reference` or `Related`) reads.
    enum RelationshipRead: Sendable {
        /// The root is not a relationship value.
        case none
        /// A reference's `id`: the stored field itself.
        case identifier
        /// Anything else: another record.
        case otherRecord
    }

    /// Whether `keyPath` reads from a relationship value, worked out once per key path (a
    /// conformance check on every translation costs a lookup in the runtime's tables).
    static func relationshipRead(of keyPath: AnyKeyPath, root: Any.Type) -> RelationshipRead {
        resolved(keyPath, root: root).relationship
    }

    /// What a key path reads, worked out once per key path: describing a key path and comparing
    /// it with `\String.count` cost more than the rest of translating a predicate.
    private static func resolved(_ keyPath: AnyKeyPath, root: Any.Type) -> Resolved {
        let key = CacheKey(keyPath: keyPath, root: ObjectIdentifier(root))
        if let known = cache.withLock({ $0[key] }) { return known }
        let resolved = Resolved(
            measure: computeMeasure(of: keyPath, root: root), names: computeNames(of: keyPath, root: root),
            relationship: computeRelationshipRead(of: keyPath, root: root))
        cache.withLock { cache in
            // Key paths are few (one per property a program names), so the table stays small.
            if cache.count < 4_096 { cache[key] = resolved }
        }
        return resolved
    }

    private struct Resolved: Sendable {
        var measure: Measure?
        var names: [String]?
        var relationship: RelationshipRead
    }

    private static func computeRelationshipRead(of keyPath: AnyKeyPath, root: Any.Type) -> RelationshipRead {
        guard root is any RelationshipValue.Type else { return .none }
        guard let reference = root as? any AnyModelReference.Type, keyPath == reference.identifierKeyPath else {
            return .otherRecord
        }
        return .identifier
    }

    /// A key path as a table key. `@unchecked Sendable`: key path objects are immutable once made,
    /// so sharing one between threads cannot race.
    private struct CacheKey: Hashable, @unchecked Sendable {
        let keyPath: AnyKeyPath
        /// The answer depends on the root the key path is read from, too.
        let root: ObjectIdentifier
    }

    private static let cache = Lock<[CacheKey: Resolved]>([:])

    private static func computeNames(of keyPath: AnyKeyPath, root: Any.Type) -> [String]? {
        let text = String(describing: keyPath)
        let prefix = "\\" + String(describing: root) + "."
        guard text.hasPrefix(prefix) else { return nil }
        var names: [String] = []
        for part in text.dropFirst(prefix.count).split(separator: ".", omittingEmptySubsequences: false) {
            var name = part
            while let last = name.last, last == "?" || last == "!" { name.removeLast() }
            guard isIdentifier(name) else { return nil }
            names.append(String(name))
        }
        guard !names.isEmpty else { return nil }
        // The names are the properties'; the record holds the coding keys.
        return StoredFieldProbe.fieldPath(of: keyPath, described: names, root: root)
    }

    private static func computeMeasure(of keyPath: AnyKeyPath, root: Any.Type) -> Measure? {
        guard let measurable = root as? any MeasurableValue.Type else { return nil }
        if keyPath == measurable.predicateCountKeyPath { return .count }
        if keyPath == measurable.predicateIsEmptyKeyPath { return .isEmpty }
        return nil
    }

    private static func isIdentifier(_ name: Substring) -> Bool {
        guard let first = name.first, first == "_" || first.isLetter else { return false }
        return name.allSatisfy { $0 == "_" || $0.isLetter || $0.isNumber }
    }
}

private protocol MeasurableValue {
    static var predicateCountKeyPath: AnyKeyPath { get }
    static var predicateIsEmptyKeyPath: AnyKeyPath { get }
}

extension String: MeasurableValue {
    fileprivate static var predicateCountKeyPath: AnyKeyPath { \String.count }
    fileprivate static var predicateIsEmptyKeyPath: AnyKeyPath { \String.isEmpty }
}

extension Array: MeasurableValue {
    fileprivate static var predicateCountKeyPath: AnyKeyPath { \Array.count }
    fileprivate static var predicateIsEmptyKeyPath: AnyKeyPath { \Array.isEmpty }
}
