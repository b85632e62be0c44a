import Foundation

/// The reserved words, matched case-insensitively.
enum QueryKeyword: String, CaseIterable {
    case `where`, and, or, not, `in`, between, contains, beginswith, endswith, like, any, all
    case sort, by, asc, desc, limit, offset, `nil`, null, `true`, `false`

    /// The keyword a name of ASCII characters spells in any case, or nil: what
    /// `QueryKeyword(rawValue: name.lowercased())` gives for such a name, without making the
    /// lowercased string or comparing it with each keyword's in turn.
    init?(asciiName bytes: ArraySlice<UInt8>) {
        let name = bytes.withUnsafeBytes { InlineKey($0) }.asciiLowercased
        // No keyword has more than 16 bytes.
        guard name.isHeld, let keyword = Self.lowercasedKeywords.first(where: { $0.name == name }) else {
            return nil
        }
        self = keyword.keyword
    }

    private static let lowercasedKeywords: [(name: InlineKey, keyword: QueryKeyword)] = allCases.map {
        (InlineKey(Array($0.rawValue.utf8)).asciiLowercased, $0)
    }
}
