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
    ///
    /// Looked up first by the key path object's identity: a key path literal is one object for
    /// the process, and hashing its address is cheap where hashing the key path walks its
    /// components (about 1,200 instructions, once per sort descriptor of a fetch). A key path
    /// made anew each time (appended, or with a subscript argument) is found by its value.
    private static func resolved(_ keyPath: AnyKeyPath, root: Any.Type) -> Resolved {
        let identity = IdentityKey(keyPath: ObjectIdentifier(keyPath), root: ObjectIdentifier(root))
        if let known = tables.withLock({ $0.byIdentity[identity]?.resolved }) { return known }
        let key = CacheKey(keyPath: keyPath, root: ObjectIdentifier(root))
        let resolved =
            tables.withLock({ $0.byValue[key] })
            ?? Resolved(
                measure: computeMeasure(of: keyPath, root: root), names: computeNames(of: keyPath, root: root),
                relationship: computeRelationshipRead(of: keyPath, root: root))
        tables.withLock { tables in
            // Key paths are few (one per property a program names), so the tables stay small.
            if tables.byValue.count < tableLimit { tables.byValue[key] = resolved }
            if tables.byIdentity.count < tableLimit {
                tables.byIdentity[identity] = IdentityEntry(keyPath: keyPath, resolved: resolved)
            }
        }
        return resolved
    }

    /// The most key paths each table keeps.
    private static let tableLimit = 4_096

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

    /// A key path object and a root, by identity.
    private struct IdentityKey: Hashable {
        let keyPath: ObjectIdentifier
        let root: ObjectIdentifier
    }

    /// What a key path object reads, with the object itself: kept alive by the table, its
    /// address names no other key path while the entry is there. `@unchecked Sendable` as
    /// `CacheKey`.
    private struct IdentityEntry: @unchecked Sendable {
        let keyPath: AnyKeyPath
        let resolved: Resolved
    }

    private struct Tables: Sendable {
        var byIdentity: [IdentityKey: IdentityEntry] = [:]
        var byValue: [CacheKey: Resolved] = [:]
    }

    private static let tables = Lock(Tables())

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
