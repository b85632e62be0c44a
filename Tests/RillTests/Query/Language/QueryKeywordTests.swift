import Foundation
import RillWorkloads
import Testing

@testable import Rill

/// A name of ASCII characters is matched against the keywords on its bytes
/// (`QueryKeyword(asciiName:)`); it must pick what `QueryKeyword(rawValue: name.lowercased())`
/// picks, for every keyword in any case and for names close to one.
@Suite struct QueryKeywordTests {
    @Test func bytesPickWhatTheLowercasedNamePicks() {
        var generator = SeededGenerator(label: "query keywords")
        print("QueryKeywordTests seed \(generator.seed)")
        let letters = Array("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_")
        var names = QueryKeyword.allCases.map(\.rawValue) + ["", "w", "wher", "wheres", "where_", "_where", "nul"]
        names += ["beginswith1", "beginswithx", "endswit", "0ffset", "offse7", "by_", "a", "i", "o"]
        for keyword in QueryKeyword.allCases {
            // Every keyword in random cases, and with one character changed, added or dropped.
            for _ in 0..<20 {
                let cased = keyword.rawValue.map {
                    Bool.random(using: &generator) ? Character($0.uppercased()) : $0
                }
                names.append(String(cased))
                var changed = cased
                let index = Int.random(in: 0..<changed.count, using: &generator)
                switch Int.random(in: 0..<3, using: &generator) {
                case 0: changed[index] = letters.randomElement(using: &generator)!
                case 1: changed.insert(letters.randomElement(using: &generator)!, at: index)
                default: changed.remove(at: index)
                }
                names.append(String(changed))
            }
        }
        for _ in 0..<2_000 {
            let count = Int.random(in: 1...17, using: &generator)
            names.append(String((0..<count).map { _ in letters.randomElement(using: &generator)! }))
        }
        for name in names {
            let bytes = Array(name.utf8)
            #expect(
                QueryKeyword(asciiName: bytes[...]) == QueryKeyword(rawValue: name.lowercased()), "\(name)")
        }
    }

    @Test func namesThatAreNotASCIIAreLowercasedAsText() throws {
        // The Kelvin sign lowercases to `k`: "liKe" with it spells the keyword, as before.
        let kelvin = "li\u{212A}e"
        #expect(QueryKeyword(rawValue: kelvin.lowercased()) == .like)
        let query = try QueryParser.parse("Book where title \(kelvin) \"a*\"")
        let plain = try QueryParser.parse("Book where title like \"a*\"")
        #expect(query.predicate == plain.predicate)
        // Any other name that is not ASCII is a name.
        let named = try QueryParser.parse("Book where naïve == 1")
        #expect(named.predicate != nil)
    }
}
