import Foundation

/// The relationships a text query's predicate looks through, and the predicate as it is then
/// evaluated.
///
/// A path whose first component is one of the entity's relationship fields, with more after it
/// (`recipe.name`, `ingredients.name`), reads the related records: the referenced one for a
/// to-one reference, the referenced ones for a to-many, the referencing ones for an inverse. So
/// do an inverse alone (`count(ingredients)`: nothing of it is stored) and a quantifier over a
/// to-many reference whose body reads fields of its element (`any tags ($.name == "x")`). A
/// stored reference alone still reads what is stored, the target's identifier, so that an index
/// on it serves.
///
/// The related records are read for each candidate, in the query's snapshot (or as of the commit
/// a live query applies), and put beside the record's own fields under a name no stored field has
/// (``relatedName(_:)``); the paths that read them are rewritten to that name. The planner sees
/// the rewritten predicate, so no index ever serves a path through a relationship. One level is
/// read: the related records' own relationships hold identifiers.
struct QueryRelationships: Sendable {
    /// One relationship the predicate reads the related records of.
    struct Read: Sendable {
        let relationship: RelationshipSchema
        /// Where the related records are put for the evaluation.
        let name: String
    }

    let reads: [Read]
    /// The predicate, reading the related records under their names.
    let predicate: QueryNode
    /// The top-level stored fields a test of a record reads: the predicate's own and the
    /// references it follows (nil: every field).
    let storedFields: Set<String>?

    /// The relationships `predicate` reads through, among `relationships` (the entity's); nil when
    /// it reads none, so that a query of an entity without relationships costs nothing more.
    init?(_ predicate: QueryNode?, relationships: [RelationshipSchema]) {
        guard let predicate, !relationships.isEmpty else { return nil }
        let byField = Dictionary(relationships.map { ($0.field, $0) }, uniquingKeysWith: { first, _ in first })
        var used: Set<String> = []
        let rewritten = Self.rewrite(predicate, byField, used: &used)
        guard !used.isEmpty else { return nil }
        reads = relationships.filter { used.contains($0.field) }.map {
            Read(relationship: $0, name: Self.relatedName($0.field))
        }
        self.predicate = rewritten
        if var fields = rewritten.topLevelFields {
            for read in reads {
                fields.remove(read.name)
                if read.relationship.isStored { fields.insert(read.relationship.field) }
            }
            storedFields = fields
        } else {
            storedFields = nil
        }
    }

    /// The conjuncts of the predicate that read no related record: a condition every match
    /// meets, decided by the record alone (nil when there is none).
    var ownCondition: QueryNode? {
        let names = Set(reads.map(\.name))
        let conjuncts: [QueryNode] = if case .and(let operands) = predicate { operands } else { [predicate] }
        let own = conjuncts.filter { conjunct in conjunct.topLevelFields.map { $0.isDisjoint(with: names) } ?? false }
        switch own.count {
        case 0: return nil
        case 1: return own[0]
        default: return .and(own)
        }
    }

    /// The name the related records of `field` are read under: no stored field has it.
    static func relatedName(_ field: String) -> String { "\u{0}related:" + field }

    /// The relationship field a name of ``relatedName(_:)`` stands for; nil for any other name.
    static func field(ofRelatedName name: String) -> String? {
        let prefix = "\u{0}related:"
        guard name.hasPrefix(prefix) else { return nil }
        return String(name.dropFirst(prefix.count))
    }

    // MARK: - Evaluating

    /// Whether the predicate holds for `record` (of `entity`, identifier key `key`), with the
    /// related records read by `loader`.
    func matches(_ record: RecordValue, key: [UInt8], entity: String, loader: RelationshipLoader) throws -> Bool {
        QueryEvaluator.matches(predicate, try augmented(record, key: key, entity: entity, loader: loader))
    }

    /// `record` with the related records beside its fields.
    func augmented(
        _ record: RecordValue, key: [UInt8], entity: String, loader: RelationshipLoader
    ) throws -> RecordValue {
        guard case .map(var fields) = record else { return record }
        for read in reads {
            let relationship = read.relationship
            let related: RecordValue
            switch relationship.kind {
            case .inverse:
                let keys = try loader.referrerKeys(
                    of: entity, key: key, source: relationship.entity, field: relationship.inverseOf ?? "")
                related = .array(try keys.compactMap { try loader.recordValue(of: relationship.entity, key: $0) })
            case .reference, .requiredReference, .references:
                let stored = fields.value(named: relationship.field) ?? .null
                func target(_ value: RecordValue) throws -> RecordValue {
                    guard value != .null,
                        let key = try? Store.referenceKey(
                            value, targetKind: loader.identifierKind(of: relationship.entity),
                            field: relationship.field, of: entity)
                    else { return .null }
                    return try loader.recordValue(of: relationship.entity, key: key) ?? .null
                }
                if case .array(let items) = stored {
                    related = .array(try items.map(target))
                } else {
                    related = relationship.kind == .references ? .null : try target(stored)
                }
            }
            fields.append(RecordField(name: read.name, value: related))
        }
        return .map(fields)
    }

    // MARK: - Rewriting

    /// `node` with the paths that read related records reading them under their names; the
    /// relationship fields so read are added to `used`.
    private static func rewrite(
        _ node: QueryNode, _ byField: [String: RelationshipSchema], used: inout Set<String>
    ) -> QueryNode {
        func go(_ node: QueryNode) -> QueryNode { rewrite(node, byField, used: &used) }
        switch node {
        case .field(let path):
            guard let first = path.first, let relationship = byField[first],
                path.count > 1 || relationship.kind == .inverse
            else { return node }
            used.insert(first)
            return .field([relatedName(first)] + path.dropFirst())
        case .element, .literal:
            return node
        case .any(let collection, let body), .all(let collection, let body):
            let subject: QueryNode
            if case .field(let path) = collection, path.count == 1, byField[path[0]]?.kind == .references,
                readsElementFields(body, depth: 0)
            {
                used.insert(path[0])
                subject = .field([relatedName(path[0])])
            } else {
                subject = go(collection)
            }
            let rewrittenBody = go(body)
            if case .any = node { return .any(subject, body: rewrittenBody) }
            return .all(subject, body: rewrittenBody)
        case .compare(let comparison, let lhs, let rhs): return .compare(comparison, go(lhs), go(rhs))
        case .and(let operands): return .and(operands.map(go))
        case .or(let operands): return .or(operands.map(go))
        case .not(let operand): return .not(go(operand))
        case .string(let test, let lhs, let rhs, let options): return .string(test, go(lhs), go(rhs), options)
        case .isIn(let operand, let candidates): return .isIn(go(operand), candidates.map(go))
        case .between(let operand, let lower, let upper):
            return .between(go(operand), lower: go(lower), upper: go(upper))
        case .count(let operand): return .count(go(operand))
        case .arithmetic(let op, let lhs, let rhs): return .arithmetic(op, go(lhs), go(rhs))
        case .negate(let operand): return .negate(go(operand))
        case .coalesce(let operand, let fallback): return .coalesce(go(operand), go(fallback))
        case .conditional(let condition, let then, let otherwise):
            return .conditional(go(condition), then: go(then), otherwise: go(otherwise))
        }
    }

    /// Whether `node`, the body of a quantifier (at `depth` 0), reads a field of that
    /// quantifier's element (`$.name`).
    private static func readsElementFields(_ node: QueryNode, depth: Int) -> Bool {
        func reads(_ node: QueryNode) -> Bool { readsElementFields(node, depth: depth) }
        switch node {
        case .element(let path): return depth == 0 && !path.isEmpty
        case .field, .literal: return false
        case .any(let collection, let body), .all(let collection, let body):
            return reads(collection) || readsElementFields(body, depth: depth + 1)
        case .compare(_, let lhs, let rhs), .string(_, let lhs, let rhs, _), .arithmetic(_, let lhs, let rhs),
            .coalesce(let lhs, let rhs):
            return reads(lhs) || reads(rhs)
        case .and(let operands), .or(let operands): return operands.contains(where: reads)
        case .not(let operand), .count(let operand), .negate(let operand): return reads(operand)
        case .isIn(let operand, let candidates): return reads(operand) || candidates.contains(where: reads)
        case .between(let operand, let lower, let upper): return reads(operand) || reads(lower) || reads(upper)
        case .conditional(let condition, let then, let otherwise):
            return reads(condition) || reads(then) || reads(otherwise)
        }
    }
}
