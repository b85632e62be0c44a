/// "Did you mean …?": the known name closest to a mistyped one.
package enum NameSuggestion {
    /// The candidate closest to `name`, ignoring case, when it is close enough to be what was
    /// meant: at most one edit in three characters (and always one edit allowed), where an edit
    /// inserts, deletes or replaces a character or swaps two neighbours (`titel` → `title`).
    /// Ties go to the earlier candidate; nil when none is close.
    package static func closest(to name: String, among candidates: [String]) -> String? {
        let folded = Array(name.lowercased())
        var best: (name: String, distance: Int)?
        for candidate in candidates where candidate != name {
            let other = Array(candidate.lowercased())
            let allowed = max(1, min(folded.count, other.count) / 3)
            let distance = distance(folded, other)
            guard distance <= allowed, distance < (best?.distance ?? .max) else { continue }
            best = (candidate, distance)
        }
        return best?.name
    }

    /// The optimal string alignment distance between two strings: the fewest insertions,
    /// deletions, replacements and swaps of neighbouring characters that turn one into the other.
    package static func distance(_ a: [Character], _ b: [Character]) -> Int {
        guard !a.isEmpty else { return b.count }
        guard !b.isEmpty else { return a.count }
        // Three rows of the dynamic-programming table: two back (for swaps), previous, current.
        var twoBack = [Int](repeating: 0, count: b.count + 1)
        var previous = Array(0...b.count)
        var current = [Int](repeating: 0, count: b.count + 1)
        for i in 1...a.count {
            current[0] = i
            for j in 1...b.count {
                let cost = a[i - 1] == b[j - 1] ? 0 : 1
                current[j] = min(previous[j] + 1, current[j - 1] + 1, previous[j - 1] + cost)
                if i > 1, j > 1, a[i - 1] == b[j - 2], a[i - 2] == b[j - 1] {
                    current[j] = min(current[j], twoBack[j - 2] + 1)
                }
            }
            (twoBack, previous, current) = (previous, current, twoBack)
        }
        return previous[b.count]
    }
}
