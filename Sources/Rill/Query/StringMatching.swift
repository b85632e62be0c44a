import Foundation

/// The string tests of queries, shared by text queries and `#Predicate` translations so both
/// answer alike.
package enum StringMatching {
    /// `text` folded as the options ask: lowercased (case-insensitive) and stripped of
    /// diacritics (diacritic-insensitive), so "Café" and "cafe" fold alike under `[cd]`.
    package static func fold(_ text: String, _ options: QueryStringOptions) -> String {
        let folding = compareOptions(options)
        guard !folding.isEmpty else { return text }
        return text.folding(options: folding, locale: nil)
    }

    /// Whether `text` passes `test` against `pattern`.
    ///
    /// Without options the tests are Swift's: `contains`, `hasPrefix` and `hasSuffix`, which
    /// compare `Character`s (an empty pattern is in every text). With options they are
    /// Foundation's search, `range(of:options:)` (anchored at the start for `beginswith`, at the
    /// end for `endswith`), which is what `localizedStandardContains` is on Linux: an empty
    /// pattern is found nowhere, and characters compare as Foundation folds them (ligatures,
    /// canonical equivalents). `like` folds both strings first, then matches its wildcards.
    ///
    /// Foundation's search reads text holding NUL as if it ended there, and traps on some such
    /// patterns ("é" searched for "é\0"): text or a pattern holding NUL is folded as the options
    /// ask and searched `Character` by `Character` instead.
    package static func matches(
        _ test: QueryStringTest, _ text: String, _ pattern: String, _ options: QueryStringOptions
    ) -> Bool {
        let search = compareOptions(options)
        if search.isEmpty {
            switch test {
            case .contains: return pattern.isEmpty || containsCharacters(text, pattern)
            case .beginsWith: return text.hasPrefix(pattern)
            case .endsWith: return text.hasSuffix(pattern)
            case .like: return like(Array(text), Array(pattern))
            }
        }
        if test != .like, holdsNUL(text) || holdsNUL(pattern) {
            let (folded, foldedPattern) = (fold(text, options), fold(pattern, options))
            guard !foldedPattern.isEmpty else { return false }
            switch test {
            case .beginsWith: return folded.hasPrefix(foldedPattern)
            case .endsWith: return folded.hasSuffix(foldedPattern)
            default: return containsCharacters(folded, foldedPattern)
            }
        }
        switch test {
        case .contains: return text.range(of: pattern, options: search) != nil
        case .beginsWith: return text.range(of: pattern, options: search.union(.anchored)) != nil
        case .endsWith: return text.range(of: pattern, options: search.union([.anchored, .backwards])) != nil
        case .like: return like(Array(fold(text, options)), Array(fold(pattern, options)))
        }
    }

    /// Whether `text` contains `pattern` ignoring case and diacritics: exactly
    /// `String.localizedStandardContains` (an empty pattern is found nowhere).
    package static func localizedStandardContains(_ text: String, _ pattern: String) -> Bool {
        matches(.contains, text, pattern, [.caseInsensitive, .diacriticInsensitive])
    }

    /// Whether `text` contains `pattern`, `Character` by `Character`: what a `#Predicate`'s
    /// `contains` evaluates (Swift's `Collection.contains(_:)`), not Foundation's
    /// `StringProtocol.contains`, which searches Unicode scalars ("a\r\nb" would contain "\r",
    /// "🇫🇷" would contain "🇫") and traps on some patterns holding NUL.
    static func containsCharacters(_ text: String, _ pattern: String) -> Bool {
        func contains<Text: Collection>(_ text: Text, _ pattern: Text) -> Bool where Text.Element: Equatable {
            text.contains(pattern)
        }
        return contains(text, pattern)
    }

    private static func holdsNUL(_ text: String) -> Bool { text.utf8.contains(0) }

    private static func compareOptions(_ options: QueryStringOptions) -> String.CompareOptions {
        var search: String.CompareOptions = []
        if options.contains(.caseInsensitive) { search.insert(.caseInsensitive) }
        if options.contains(.diacriticInsensitive) { search.insert(.diacriticInsensitive) }
        return search
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
