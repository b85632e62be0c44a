import Foundation

/// The string tests of queries, shared by text queries and `#Predicate` translations so both
/// answer alike.
package enum StringMatching {
    /// `text` folded as the options ask: lowercased (case-insensitive) and stripped of
    /// diacritics (diacritic-insensitive), so "Café" and "cafe" fold alike under `[cd]`.
    package static func fold(_ text: String, _ options: QueryStringOptions) -> String {
        var folding: String.CompareOptions = []
        if options.contains(.caseInsensitive) { folding.insert(.caseInsensitive) }
        if options.contains(.diacriticInsensitive) { folding.insert(.diacriticInsensitive) }
        guard !folding.isEmpty else { return text }
        return text.folding(options: folding, locale: nil)
    }

    /// Whether `text` passes `test` against `pattern`.
    package static func matches(
        _ test: QueryStringTest, _ text: String, _ pattern: String, _ options: QueryStringOptions
    ) -> Bool {
        let text = fold(text, options)
        let pattern = fold(pattern, options)
        switch test {
        case .contains: return pattern.isEmpty || text.contains(pattern)
        case .beginsWith: return text.hasPrefix(pattern)
        case .endsWith: return text.hasSuffix(pattern)
        case .like: return like(Array(text), Array(pattern))
        }
    }

    /// Wildcard match: `*` any run of characters, `?` exactly one; everything else literal.
    private static func like(_ text: [Character], _ pattern: [Character]) -> Bool {
        var t = 0
        var p = 0
        var starPattern = -1
        var starText = 0
        while t < text.count {
            if p < pattern.count, pattern[p] == "?" || (pattern[p] != "*" && pattern[p] == text[t]) {
                t += 1
                p += 1
            } else if p < pattern.count, pattern[p] == "*" {
                starPattern = p
                starText = t
                p += 1
            } else if starPattern >= 0 {
                // Let the last star swallow one more character and try again.
                starText += 1
                t = starText
                p = starPattern + 1
            } else {
                return false
            }
        }
        while p < pattern.count, pattern[p] == "*" { p += 1 }
        return p == pattern.count
    }
}
