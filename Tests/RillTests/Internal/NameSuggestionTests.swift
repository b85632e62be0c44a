import RillTestSupport
import RillWorkloads
import Testing

@testable import Rill

/// "Did you mean …?": the edit distance against a brute-force definition, and which names are offered.
@Suite struct NameSuggestionTests {
    /// The optimal string alignment distance by its recursive definition.
    static func slowDistance(_ a: [Character], _ b: [Character]) -> Int {
        var memo: [Int: Int] = [:]
        func d(_ i: Int, _ j: Int) -> Int {
            if i == 0 { return j }
            if j == 0 { return i }
            if let known = memo[i * 1000 + j] { return known }
            var best = min(d(i - 1, j) + 1, d(i, j - 1) + 1, d(i - 1, j - 1) + (a[i - 1] == b[j - 1] ? 0 : 1))
            if i > 1, j > 1, a[i - 1] == b[j - 2], a[i - 2] == b[j - 1] { best = min(best, d(i - 2, j - 2) + 1) }
            memo[i * 1000 + j] = best
            return best
        }
        return d(a.count, b.count)
    }

    @Test func distanceMatchesItsDefinitionOnRandomWords() {
        var random = SeededGenerator(label: "name suggestion distance")
        let letters: [Character] = ["a", "b", "c", "é", "e"]
        for _ in 0..<2_000 {
            let a = (0..<Int.random(in: 0...7, using: &random)).map { _ in letters.randomElement(using: &random)! }
            let b = (0..<Int.random(in: 0...7, using: &random)).map { _ in letters.randomElement(using: &random)! }
            #expect(NameSuggestion.distance(a, b) == Self.slowDistance(a, b), "\(String(a)) / \(String(b))")
        }
    }

    @Test func closeNamesAreOfferedAndFarOnesAreNot() {
        let fields = ["id", "title", "pages", "isRead", "priority", "address"]
        #expect(NameSuggestion.closest(to: "titel", among: fields) == "title")
        #expect(NameSuggestion.closest(to: "priorty", among: fields) == "priority")
        #expect(NameSuggestion.closest(to: "adress", among: fields) == "address")
        #expect(NameSuggestion.closest(to: "ISREAD", among: fields) == "isRead")
        #expect(NameSuggestion.closest(to: "pagez", among: fields) == "pages")
        #expect(NameSuggestion.closest(to: "x", among: fields) == nil)
        #expect(NameSuggestion.closest(to: "author", among: fields) == nil)
        #expect(NameSuggestion.closest(to: "title", among: fields) == nil, "the name itself is not a suggestion")
    }
}
