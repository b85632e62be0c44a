import Foundation

/// A ``FamilyDescriptor``'s predicate as deep fetches and live queries decide it: translated
/// with the family's kinds, and otherwise evaluated on each model with total semantics (as
/// `ModelPredicate` does for one model type).
struct FamilyPredicate<Base>: Sendable {
    let predicate: Predicate<Base>?
    /// The translation, when there is a predicate.
    let translation: PredicateTranslation?
    /// The complete translation: it decides alone whether a record matches.
    let exact: QueryNode?
    private let mayFail: Bool
    private let entityName: String

    init(_ predicate: Predicate<Base>?, family: ModelFamily) {
        self.predicate = predicate
        entityName = family.entityName
        var translation = predicate.map {
            PredicateTranslator.translate($0, family: family.translation(base: Base.self))
        }
        // As for one model type: a field some kind's evolution adds or renames is decided on the models.
        let evolved = family.evolvedFields
        if !evolved.isEmpty, let node = translation?.node,
            node.topLevelFields.map({ !$0.isDisjoint(with: evolved) }) ?? true
        {
            translation = nil
        }
        self.translation = translation
        let exact = translation.flatMap { $0.isComplete ? $0.node : nil }
        self.exact = exact
        mayFail = predicate.map { exact != nil || TotalEvaluation.mayFail($0.expression) } ?? false
    }

    /// Whether `model`, a model not saved yet, matches.
    func matches(_ model: Base) throws -> Bool {
        guard predicate != nil else { return true }
        guard let exact else { return try evaluate(model) }
        guard let persistent = model as? any PersistentModel else { return try evaluate(model) }
        let record: RecordValue
        do {
            record = try Self.record(of: persistent)
        } catch {
            throw RillError(
                .queryFailed, "\(entityName) \(persistent.id) cannot be tested: \(ModelContext.describe(error))",
                underlyingError: error)
        }
        return QueryEvaluator.matches(exact, record)
    }

    private static func record<M: PersistentModel>(of model: M) throws -> RecordValue {
        try M.encodeStored(model).withUnsafeBytes { try RecordValue(record: $0) }
    }

    /// Whether `model` matches, by evaluating the predicate on it.
    ///
    /// - Throws: `RillError(.queryFailed)` when the predicate throws.
    func evaluate(_ model: Base) throws -> Bool {
        guard let predicate else { return true }
        do {
            return mayFail ? try TotalEvaluation.evaluate(predicate, model) : try predicate.evaluate(model)
        } catch {
            throw RillError(
                .queryFailed, "the predicate failed on a model of \(entityName): \(error)", underlyingError: error)
        }
    }
}
