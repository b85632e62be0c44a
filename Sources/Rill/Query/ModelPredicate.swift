import Foundation

/// A `FetchDescriptor`'s predicate as fetches and live queries decide it: with total semantics,
/// so that no predicate and no stored value can crash the process.
///
/// - A predicate translated completely into Rill's query form is decided by the translation,
///   on the stored record (`QueryEvaluator`): the semantics of the text query language.
/// - Otherwise the predicate is evaluated on the model: by `TotalEvaluation` when some expression
///   in it can trap or throw in Swift (integer arithmetic, a closed range, a force unwrap, a
///   subscript), which computes as Swift does except where Swift would fail, and there as the
///   evaluator does; by Foundation otherwise.
@usableFromInline
struct ModelPredicate<T: PersistentModel>: Sendable {
    /// The predicate, when it is evaluated on models: nil when there is none, and when its
    /// translation is complete (which then decides alone). Not kept needlessly: a `Predicate` is
    /// copied through the metadata of its variadic generic type, looked up at each copy, and a
    /// fetch copies its `ModelPredicate` several times.
    private(set) var predicate: Predicate<T>?
    /// Whether the descriptor has a predicate.
    let hasPredicate: Bool
    /// The translation, when there is a predicate.
    private(set) var translation: PredicateTranslation?
    /// The complete translation: it decides alone whether a record matches.
    private(set) var exact: QueryNode?
    /// What a stored record must meet before it is decoded when the translation does not decide
    /// alone: the kind test of a family's kind (a record of another kind may not decode as this
    /// one, or may decode as something it is not). Nil otherwise.
    let recordTest: QueryNode?
    /// Whether the predicate must be evaluated by `TotalEvaluation` (Foundation's evaluation could
    /// trap or throw).
    private let mayFail: Bool
    /// The model's relationship fields the predicate looks through: resolved on each candidate
    /// before the predicate is evaluated on it (see `RelationshipReads`).
    @usableFromInline let relationshipFields: Set<String>
    /// The plan shared by the fetches of the prepared translation this is bound from; nil for a
    /// predicate translated alone.
    private(set) var preparedPlan: PreparedPlan?
    /// The captured values bound to the prepared translation, in the order of its stand-ins
    /// (`PreparedPlan.Operand.leaf`); empty for a predicate translated alone.
    private(set) var leafValues: [RecordValue] = []

    /// How `descriptor`'s predicate is decided: from a prepared translation of its signature
    /// when there is one (see `PreparedTranslation`), else translated now.
    ///
    /// The descriptor, not its predicate: the optional predicate is read where it is, in this one
    /// function, where handing a copy of it to an initializer looked the metadata of its types up,
    /// and copied it, in the caller and again in the callee.
    @inlinable
    init(of descriptor: borrowing FetchDescriptor<T>) {
        if let predicate = descriptor.predicate, let prepared = PreparedPredicates.modelPredicate(for: predicate) {
            self = prepared
            return
        }
        self.init(translating: descriptor.predicate)
    }

    /// How `predicate` is decided, translated now; with `preparation`, with its stand-ins in
    /// place of the captured values.
    @usableFromInline
    init(translating predicate: Predicate<T>?, preparation: TranslationPreparation? = nil) {
        self.predicate = predicate
        hasPredicate = predicate != nil
        var translation = predicate.map {
            PredicateTranslator.translate($0, family: nil, preparation: preparation)
        }
        // A field the model's evolution adds or renames is not in the records of earlier
        // versions as the model reads it: a predicate that reads one is evaluated on the models
        // (each read through the evolution), not on the stored records or an index.
        let evolved = T.evolvedFields
        if !evolved.isEmpty, let node = translation?.node,
            node.topLevelFields.map({ !$0.isDisjoint(with: evolved) }) ?? true
        {
            translation = nil
        }
        // A kind of a family shares its entity with the other kinds: its records are those whose
        // discriminator names it, a conjunct of every predicate (and the whole of none).
        let kindTest = T.kindTest
        if let kindTest {
            translation = Self.conjoining(kindTest, to: translation, hasPredicate: predicate != nil)
        }
        self.translation = translation
        let exact = translation.flatMap { $0.isComplete ? $0.node : nil }
        recordTest = exact == nil ? kindTest : nil
        self.exact = exact
        // Looking through the tree costs more than a whole indexed fetch: only a predicate that
        // will be evaluated on models is looked at (one with a complete translation is
        // evaluated, if ever, with total semantics).
        mayFail = predicate.map { exact != nil || TotalEvaluation.mayFail($0.expression) } ?? false
        relationshipFields =
            exact == nil && predicate != nil && !T.relationships.isEmpty
            ? RelationshipReads.fields(of: predicate!, in: T.self) : []
        if exact != nil { self.predicate = nil }
    }

    /// This template's decision for `predicate`, a predicate of its signature: its stand-ins
    /// replaced by `leaves`, the predicate's captured values. The translation's `untranslated`
    /// is left empty (its descriptions would show the template's values).
    func bound(to predicate: Predicate<T>, leaves: PreparedTranslation.Leaves, plan: PreparedPlan) -> ModelPredicate {
        var bound = self
        bound.preparedPlan = plan
        bound.leafValues = leaves.values
        if exact == nil { bound.predicate = predicate }
        if let translation, let node = translation.node {
            let boundNode = PreparedTranslation.bind(node, to: leaves)
            bound.translation = PredicateTranslation(
                node: boundNode, isComplete: translation.isComplete, untranslated: [])
            // `exact` is the complete translation's node (see `init(translating:preparation:)`).
            if exact != nil { bound.exact = boundNode }
        }
        return bound
    }

    /// `translation` with `kindTest` as one more conjunct: complete when there was no predicate,
    /// or when its translation was complete (an evolved field's predicate has none).
    private static func conjoining(
        _ kindTest: QueryNode, to translation: PredicateTranslation?, hasPredicate: Bool
    ) -> PredicateTranslation {
        guard let translation else {
            return PredicateTranslation(node: kindTest, isComplete: !hasPredicate, untranslated: [])
        }
        var operands = [kindTest]
        if case .and(let others)? = translation.node {
            operands += others
        } else if let node = translation.node {
            operands.append(node)
        }
        return PredicateTranslation(
            node: .and(operands), isComplete: translation.isComplete, untranslated: translation.untranslated)
    }

    /// Whether `record`, the stored form of a model, matches; only for a complete translation.
    func matches(record: RecordValue) -> Bool {
        guard let exact else { return true }
        return QueryEvaluator.matches(exact, record)
    }

    /// Whether `model` matches, when its stored form is not at hand (a model not saved yet).
    ///
    /// - Throws: `RillError(.queryFailed)` naming the model when the predicate throws, or when
    ///   the model cannot be encoded to be tested.
    func matches(_ model: T) throws -> Bool {
        guard hasPredicate else { return true }
        guard let exact else { return try evaluate(model) }
        let record: RecordValue
        do {
            record = try T.encodeStored(model).withUnsafeBytes { try RecordValue(record: $0) }
        } catch {
            throw RillError(
                .queryFailed, "\(T.entityName) \(model.id) cannot be tested: \(ModelContext.describe(error))",
                underlyingError: error)
        }
        return QueryEvaluator.matches(exact, record)
    }

    /// Whether `model` matches, by evaluating the predicate on it (for predicates without a
    /// complete translation; with one, which keeps no `Predicate`, as `matches(_:)` decides).
    ///
    /// - Throws: `RillError(.queryFailed)` naming the model when the predicate throws.
    func evaluate(_ model: T) throws -> Bool {
        guard let predicate else { return exact == nil ? true : try matches(model) }
        do {
            return mayFail ? try TotalEvaluation.evaluate(predicate, model) : try predicate.evaluate(model)
        } catch {
            throw RillError(
                .queryFailed, "the predicate failed on \(T.entityName) \(model.id): \(error)", underlyingError: error)
        }
    }
}
