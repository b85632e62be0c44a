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
        guard name.isHeld, let keyword = Self.table.keyword(name) else { return nil }
        self = keyword
    }

    /// The keywords by a hash of their lowercased bytes: one slot each.
    private static let table = KeywordTable(allCases.map { (InlineKey(Array($0.rawValue.utf8)).asciiLowercased, $0) })

    private struct KeywordTable {
        private var slots: [(name: InlineKey, keyword: QueryKeyword)?] = Array(repeating: nil, count: 64)
        private var multiplier: UInt64 = 0

        /// A table whose slots are picked by the first odd multiplier (from a fixed sequence)
        /// that puts no two keywords in one slot.
        init(_ keywords: [(InlineKey, QueryKeyword)]) {
            var candidate: UInt64 = 0x9E37_79B9_7F4A_7C15
            while true {
                multiplier = candidate
                slots = Array(repeating: nil, count: 64)
                var collides = false
                for (name, keyword) in keywords {
                    let slot = self.slot(name)
                    if slots[slot] != nil { collides = true }
                    slots[slot] = (name, keyword)
                }
                if !collides { return }
                candidate = candidate &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407 | 1
            }
        }

        private func slot(_ name: InlineKey) -> Int {
            let mixed = name.low ^ (name.high &* 31) ^ UInt64(bitPattern: Int64(name.length))
            return Int(truncatingIfNeeded: (mixed &* multiplier) >> 58)
        }

        func keyword(_ name: InlineKey) -> QueryKeyword? {
            guard let entry = slots[slot(name)], entry.name == name else { return nil }
            return entry.keyword
        }
    }
}
