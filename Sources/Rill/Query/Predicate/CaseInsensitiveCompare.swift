import Foundation

#if !canImport(Darwin)
    extension PredicateExpressions {
        /// `text.caseInsensitiveCompare(other)` in a `#Predicate`, which Foundation lacks on Linux:
        /// the order of the two strings with case ignored, exactly as the `String` method of the
        /// same name gives it.
        ///
        /// Compare its result with a captured value (an enum case cannot be written inside the
        /// macro's closure):
        ///
        /// ```swift
        /// let same = ComparisonResult.orderedSame
        /// let predicate = #Predicate<Book> { $0.title.caseInsensitiveCompare(title) == same }
        /// ```
        public struct CaseInsensitiveCompare<Root: PredicateExpression, Other: PredicateExpression>:
            PredicateExpression
        where Root.Output: StringProtocol, Other.Output: StringProtocol {
            public typealias Output = ComparisonResult

            /// The string compared.
            public let root: Root
            /// The string it is compared with.
            public let other: Other

            /// An expression comparing `root` with `other`, ignoring case.
            public init(root: Root, other: Other) {
                self.root = root
                self.other = other
            }

            /// The order of the two strings, ignoring case: what `String.caseInsensitiveCompare`
            /// answers.
            public func evaluate(_ bindings: PredicateBindings) throws -> ComparisonResult {
                String(try root.evaluate(bindings)).caseInsensitiveCompare(String(try other.evaluate(bindings)))
            }
        }

        /// What `#Predicate` calls for `text.caseInsensitiveCompare(other)`.
        public static func build_caseInsensitiveCompare<Root, Other>(
            _ root: Root, _ other: Other
        ) -> CaseInsensitiveCompare<Root, Other> {
            CaseInsensitiveCompare(root: root, other: other)
        }
    }

    extension PredicateExpressions.CaseInsensitiveCompare: StandardPredicateExpression
    where Root: StandardPredicateExpression, Other: StandardPredicateExpression {}

    extension PredicateExpressions.CaseInsensitiveCompare: Codable where Root: Codable, Other: Codable {}

    extension PredicateExpressions.CaseInsensitiveCompare: Sendable where Root: Sendable, Other: Sendable {}
#endif
