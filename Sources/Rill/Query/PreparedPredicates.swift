import Foundation
import RillLocks

/// The prepared translations of the process: for each model type and predicate expression type,
/// the templates of the signatures seen (see `PreparedTranslation`).
///
/// A fetch with a `#Predicate` finds its template by the expression's type, then by the
/// signature's structure and its values' shapes, and binds it to its values: one walk of the
/// tree to collect them, where translating it anew casts every node to find its translation and
/// resolves every key path. What a template holds depends on the model type and the predicate
/// alone, never on a store, so one table serves every store and context of the process.
@usableFromInline
enum PreparedPredicates {
    /// The most signatures kept for one expression type: a predicate written once in the source
    /// has one, or a few when its key paths or operators are chosen at run time.
    private static let signaturesPerType = 8
    /// The most expression types kept; the table starts afresh past it.
    private static let typeLimit = 1_024
    /// How often a type's predicates may fail to give a template before none is tried again.
    private static let attemptsPerType = 4

    private struct Key: Hashable {
        var expression: ObjectIdentifier
        var model: ObjectIdentifier
    }

    /// An object, so that a fetch reading the templates of its type copies a reference for each,
    /// not its signature's and translation's lists.
    private final class Entry: @unchecked Sendable {
        // Sendable: `decision` holds a `ModelPredicate` of the key's model type, immutable once
        // made; its predicate's values are those of the first predicate of the signature.
        let signature: PredicateSignature
        let translation: PreparedTranslation
        /// A `Decision<T>`, `T` the key's model type: a reference, so that reading it back is a
        /// cast of a class the key already names, not a dynamic cast from `Any`.
        let decision: AnyObject
        /// The plan its fetches share.
        let plan: PreparedPlan
        /// What a fetch's predicate is matched against.
        let pattern: SignaturePattern

        init(
            signature: PredicateSignature, translation: PreparedTranslation, decision: AnyObject,
            template: QueryNode?
        ) {
            self.signature = signature
            self.translation = translation
            self.decision = decision
            pattern = SignaturePattern(signature: signature, translation: translation)
            plan = PreparedPlan(operands: Self.operands(of: template, translation))
        }

        /// Each conjunct of the template's translation `node` as a comparison of a field with
        /// one stand-in: its operator and the place of the value the stand-in takes.
        private static func operands(of node: QueryNode?, _ translation: PreparedTranslation) -> [PreparedPlan.Operand?]
        {
            guard let node else { return [] }
            return QueryPlanner.conjuncts(of: node).map { conjunct in
                guard let (comparison, value) = QueryPlanner.comparison(conjunct), case .uuid(let uuid) = value,
                    let (position, leaf) = TranslationPreparation.standInPosition(uuid),
                    position < translation.leafStarts.count, translation.translated[position]
                else { return nil }
                return PreparedPlan.Operand(comparison: comparison, leaf: translation.leafStarts[position] + leaf)
            }
        }
    }

    /// The `ModelPredicate<T>` with stand-ins.
    private final class Decision<T: PersistentModel> {
        let predicate: ModelPredicate<T>
        init(_ predicate: ModelPredicate<T>) { self.predicate = predicate }

        /// The template bound to `predicate`'s values, read where it is (not copied out first).
        func bound(
            to predicate: Predicate<T>, leaves: PreparedTranslation.Leaves, plan: PreparedPlan
        ) -> ModelPredicate<T> {
            self.predicate.bound(to: predicate, leaves: leaves, plan: plan)
        }
    }

    private struct Templates: @unchecked Sendable {
        // Sendable: a metatype.
        /// The expression type as one that collects its signature; nil when it does not.
        var preparable: (any PreparablePredicateExpression.Type)?
        var entries: [Entry] = []
        var failures = 0
    }

    private static let table = Lock<[Key: Templates]>([:])

    /// How `predicate` is decided, from a template of its signature (made now when there is
    /// none); nil when its tree cannot be prepared, or a captured value has no stored form.
    @usableFromInline
    static func modelPredicate<T: PersistentModel>(for predicate: Predicate<T>) -> ModelPredicate<T>? {
        let expressionType = type(of: predicate.expression)
        let key = Key(expression: ObjectIdentifier(expressionType), model: ObjectIdentifier(T.self))
        var templates = table.withLock { $0[key] }
        if templates == nil {
            // The conformance looked up once per type.
            let made = Templates(preparable: expressionType as? any PreparablePredicateExpression.Type)
            table.withLock { table in
                if table.count >= typeLimit { table.removeAll() }
                if table[key] == nil { table[key] = made }
            }
            templates = made
        }
        guard let preparable = templates?.preparable else { return nil }
        let root = predicate.variable.key
        // Matched against each template as its tree is walked: no signature is collected.
        for entry in templates?.entries ?? [] {
            guard
                let leaves = PredicateSignature(
                    predicate.expression, as: preparable, root: root, matching: entry.pattern)?.leaves
            else { continue }
            // The key names `T`: every decision under it is a `Decision<T>`.
            return unsafeDowncast(entry.decision, to: Decision<T>.self).bound(
                to: predicate, leaves: leaves, plan: entry.plan)
        }
        guard let signature = PredicateSignature(predicate.expression, as: preparable, root: root),
            signature.hasEveryLiteral,
            (templates?.entries.count ?? 0) < signaturesPerType, (templates?.failures ?? 0) < attemptsPerType
        else { return nil }
        // A template, checked: the translator read the values the signature collected.
        let preparation = TranslationPreparation()
        let decision = ModelPredicate(translating: predicate, preparation: preparation)
        guard let translation = preparation.template(checkedAgainst: signature),
            let leaves = translation.leaves(of: signature)
        else {
            table.withLock { $0[key, default: Templates(preparable: preparable)].failures += 1 }
            return nil
        }
        let entry = Entry(
            signature: signature, translation: translation, decision: Decision(decision),
            template: decision.translation?.node)
        table.withLock { table in
            // Another thread may have made the same template meanwhile.
            let entries = table[key]?.entries ?? []
            guard
                !entries.contains(where: {
                    $0.signature.hasSameStructure(as: signature) && $0.translation.shapes == translation.shapes
                })
            else { return }
            table[key, default: Templates(preparable: preparable)].entries.append(entry)
        }
        return decision.bound(to: predicate, leaves: leaves, plan: entry.plan)
    }

    /// How many templates the table holds for predicates of `predicate`'s expression type.
    static func templateCount<T: PersistentModel>(for predicate: Predicate<T>) -> Int {
        let key = Key(expression: ObjectIdentifier(type(of: predicate.expression)), model: ObjectIdentifier(T.self))
        return table.withLock { $0[key]?.entries.count ?? 0 }
    }
}
