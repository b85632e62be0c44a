import Foundation

/// Translates `#Predicate`s into Rill's query form, as far as that can be done exactly.
///
/// A predicate that is an AND (at any depth of ANDs) is translated conjunct by conjunct, and a
/// conjunct without an exact equivalent is left out: the result is then a necessary condition
/// (every record the predicate accepts matches it), never a wrong one. Below an OR or a NOT,
/// a part that cannot be translated makes the whole OR or NOT untranslatable.
package enum PredicateTranslator {
    /// The translation of as much of `predicate` as can be translated exactly.
    ///
    /// With `family`, the predicate reads the records of a family of model types (its input is
    /// the family's base): `$0 is Kind` and `$0 as? Kind` test the discriminator.
    package static func translate<T>(
        _ predicate: Predicate<T>, family: FamilyTranslation? = nil
    ) -> PredicateTranslation {
        translate(predicate, family: family, preparation: nil)
    }

    /// `translate(_:family:)`, with the captured values translated to `preparation`'s stand-ins
    /// and recorded in it conjunct by conjunct (see `PreparedTranslation`).
    static func translate<T>(
        _ predicate: Predicate<T>, family: FamilyTranslation?, preparation: TranslationPreparation?
    ) -> PredicateTranslation {
        var conjuncts: [Conjunct] = []
        collectConjuncts(of: predicate.expression, roots: [predicate.variable.key], into: &conjuncts)
        var nodes: [QueryNode] = []
        var untranslated: [String] = []
        for conjunct in conjuncts {
            var context = PredicateTranslationContext(root: predicate.variable.key)
            context.family = family
            context.preparation = preparation
            preparation?.beginConjunct()
            for root in conjunct.roots { context.bindRoot(root) }
            let translated = context.translate(conjunct.expression)
            preparation?.endConjunct(translated: translated != nil)
            if let node = translated {
                if case .and(let operands) = node { nodes += operands } else { nodes.append(node) }
            } else {
                untranslated.append(String(describing: conjunct.expression))
            }
        }
        let node: QueryNode? =
            switch nodes.count {
            case 0: nil
            case 1: nodes[0]
            default: .and(nodes)
            }
        return PredicateTranslation(node: node, isComplete: untranslated.isEmpty, untranslated: untranslated)
    }

    /// One conjunct, with the variables that stand for the record in it (a combined predicate's
    /// parts each have their own input variable).
    private struct Conjunct {
        var expression: Any
        var roots: [PredicateExpressions.VariableID]
    }

    private static func collectConjuncts(
        of expression: Any, roots: [PredicateExpressions.VariableID], into conjuncts: inout [Conjunct]
    ) {
        if let conjunction = expression as? any ConjunctionOperands {
            for operand in conjunction.conjunctionOperands {
                collectConjuncts(of: operand, roots: roots, into: &conjuncts)
            }
        } else if let application = expression as? any AppliedPredicate, roots.contains(application.inputVariable) {
            // `p && q`: the conjuncts of `p` and of `q`, each reading the same record.
            collectConjuncts(
                of: application.innerExpression, roots: roots + [application.innerVariable], into: &conjuncts)
        } else {
            conjuncts.append(Conjunct(expression: expression, roots: roots))
        }
    }
}

private protocol ConjunctionOperands {
    var conjunctionOperands: [Any] { get }
}

extension PredicateExpressions.Conjunction: ConjunctionOperands {
    fileprivate var conjunctionOperands: [Any] { [lhs, rhs] }
}
