import Foundation

/// The reserved words, matched case-insensitively.
enum QueryKeyword: String, CaseIterable {
    case `where`, and, or, not, `in`, between, contains, beginswith, endswith, like, any, all
    case sort, by, asc, desc, limit, offset, `nil`, null, `true`, `false`

    /// The keyword a name of ASCII characters spells in any case, or nil: what
    /// `QueryKeyword(rawValue: name.lowercased())` gives for such a name, without making the
    /// lowercased string or comparing it with each keyword's in turn.
    init?(asciiName bytes: ArraySlice<UInt8>) {
        guard let packed = Self.packedLowercase(bytes) else { return nil }
        let table = Self.packedKeywords
        var index = 0
        while index < table.count {
            if table[index].packed == packed {
                self = table[index].keyword
                return
            }
            index += 1
        }
        return nil
    }

    /// Up to 16 ASCII bytes packed into two words, each letter lowercased, and the count in the
    /// last byte; nil for a longer name (no keyword is). Lowercasing sets bit 5 of each byte:
    /// that maps `A`–`Z` to `a`–`z`, leaves `a`–`z` and the digits as they are, and makes `_`
    /// a byte no keyword holds.
    private static func packedLowercase<Bytes: Collection<UInt8>>(_ bytes: Bytes) -> Packed? {
        let count = bytes.count
        guard count <= 15 else { return nil }
        var low: UInt64 = 0
        var high: UInt64 = UInt64(count) << 56
        var shift: UInt64 = 0
        for byte in bytes {
            let lowered = UInt64(byte | 0x20)
            if shift < 64 {
                low |= lowered << shift
            } else {
                high |= lowered << (shift - 64)
            }
            shift += 8
        }
        return Packed(low: low, high: high)
    }

    private struct Packed: Equatable {
        var low: UInt64
        var high: UInt64
    }

    private static let packedKeywords: [(packed: Packed, keyword: QueryKeyword)] = allCases.map {
        (packedLowercase(Array($0.rawValue.utf8))!, $0)
    }
}
