import Foundation

// `is` and `as?` on the record of a family of model types: its discriminator names its kind.
// Value types have no subclasses: a kind is exactly one struct type, and `$0 is BakedGood` holds
// for the records whose discriminator is BakedGood's name. A protocol (`$0 is any Sweet`) holds
// for the kinds that conform to it, which a value of each kind tells.

extension PredicateExpressions.TypeCheck: QueryTranslatable {
    /// The kind test, when the input is the record of a family and the type is one of its kinds
    /// (or the base: always true, or a protocol: the kinds that conform to it).
    package func queryNode(in context: inout PredicateTranslationContext) -> QueryNode? {
        guard let family = context.family, case .field([])? = context.translate(input) else { return nil }
        return family.test(ofKind: Desired.self) ?? family.test(ofKindsThatAre: Desired.self)
    }
}

extension PredicateExpressions.ConditionalCast: QueryTranslatable {
    /// The record under the kind test, else null: `kind == "BakedGood" ? record : null`.
    package func queryNode(in context: inout PredicateTranslationContext) -> QueryNode? {
        guard let family = context.family, case .field([])? = context.translate(input),
            let test = family.test(ofKind: Desired.self) ?? family.test(ofKindsThatAre: Desired.self)
        else { return nil }
        return .conditional(test, then: .field([]), otherwise: .literal(.null))
    }
}
