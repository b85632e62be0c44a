import Foundation

#if !canImport(Darwin)
    extension PredicateExpressions {
        /// `text.localizedStandardContains(other)` in a `#Predicate`: containment ignoring case and
        /// diacritics ("Café" contains "cafe"), exactly as the `String` method of the same name
        /// answers (an empty string is contained nowhere), and as Rill's `contains[cd]` decides it.
        public struct LocalizedStandardContains<Root: PredicateExpression, Other: PredicateExpression>:
            PredicateExpression
        where Root.Output: StringProtocol, Other.Output: StringProtocol {
            public typealias Output = Bool

            /// The text searched.
            public let root: Root
            /// The text searched for.
            public let other: Other

            /// An expression testing whether `root` contains `other`.
            public init(root: Root, other: Other) {
                self.root = root
                self.other = other
            }

            /// Whether the text contains the other, ignoring case and diacritics.
            public func evaluate(_ bindings: PredicateBindings) throws -> Bool {
                let text = String(try root.evaluate(bindings))
                let pattern = String(try other.evaluate(bindings))
                return StringMatching.localizedStandardContains(text, pattern)
            }
        }

        /// What `#Predicate` calls for `text.localizedStandardContains(other)`.
        public static func build_localizedStandardContains<Root, Other>(
            _ root: Root, _ other: Other
        ) -> LocalizedStandardContains<Root, Other> {
            LocalizedStandardContains(root: root, other: other)
        }
    }

    extension PredicateExpressions.LocalizedStandardContains: StandardPredicateExpression
    where Root: StandardPredicateExpression, Other: StandardPredicateExpression {}

    extension PredicateExpressions.LocalizedStandardContains: Codable where Root: Codable, Other: Codable {}

    extension PredicateExpressions.LocalizedStandardContains: Sendable where Root: Sendable, Other: Sendable {}

    extension PredicateExpressions.LocalizedStandardContains: CustomStringConvertible {
        /// The expression as `localizedStandardContains(root, other)`.
        public var description: String {
            "LocalizedStandardContains(root: \(root), other: \(other))"
        }
    }

    extension PredicateExpressions.LocalizedStandardContains: QueryTranslatable {
        /// The equivalent query node; nil when there is none.
        package func queryNode(in context: inout PredicateTranslationContext) -> QueryNode? {
            guard let text = context.translate(root), let pattern = context.translate(other) else { return nil }
            return .string(.contains, text, pattern, [.caseInsensitive, .diacriticInsensitive])
        }
    }
#endif
