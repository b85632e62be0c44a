import Foundation

/// How query values compare: numerically across integer and floating-point kinds, by Swift's
/// `String` order for strings, and, for sorting, in a fixed order across kinds.
///
/// The order across kinds (used only to sort mixed data, never for a predicate's `<`):
/// null < Bool < numbers < strings < data < dates < UUIDs < arrays < maps.
package enum QueryValueOrder {
    /// Equality as a predicate sees it: numbers by value across kinds, URL and string by text.
    package static func equal(_ lhs: RecordValue, _ rhs: RecordValue) -> Bool {
        switch (lhs, rhs) {
        case (.null, .null): return true
        case (.null, _), (_, .null): return false
        case (.array(let a), .array(let b)):
            return a.count == b.count && zip(a, b).allSatisfy { equal($0, $1) }
        case (.map(let a), .map(let b)):
            return a.count == b.count && zip(a, b).allSatisfy { $0.name == $1.name && equal($0.value, $1.value) }
        default:
            return compare(lhs, rhs) == .orderedSame
        }
    }

    /// The order of two values of comparable kinds; nil when they cannot be ordered (different
    /// kinds, null, NaN, arrays, maps). A predicate's `<` with a nil order is false.
    package static func compare(_ lhs: RecordValue, _ rhs: RecordValue) -> ComparisonResult? {
        if let a = Number(lhs), let b = Number(rhs) { return Number.compare(a, b) }
        switch (lhs, rhs) {
        case (.string(let a), .string(let b)), (.url(let a), .url(let b)), (.string(let a), .url(let b)),
            (.url(let a), .string(let b)):
            return a == b ? .orderedSame : (a < b ? .orderedAscending : .orderedDescending)
        case (.bool(let a), .bool(let b)):
            return a == b ? .orderedSame : (!a ? .orderedAscending : .orderedDescending)
        case (.date(let a), .date(let b)):
            // As `Date` compares its intervals; a NaN one is in no order (see `unorderedDates`).
            let (x, y) = (a.timeIntervalSinceReferenceDate, b.timeIntervalSinceReferenceDate)
            if x.isNaN || y.isNaN { return nil }
            return x == y ? .orderedSame : (x < y ? .orderedAscending : .orderedDescending)
        case (.uuid(let a), .uuid(let b)):
            return order(bytes(a), bytes(b))
        case (.uuid(let a), .string(let b)):
            return UUIDText.uuid(b).map { order(bytes(a), bytes($0)) }
        case (.string(let a), .uuid(let b)):
            return UUIDText.uuid(a).map { order(bytes($0), bytes(b)) }
        case (.data(let a), .data(let b)):
            return order(Array(a), Array(b))
        default:
            return nil
        }
    }

    /// Whether `lhs` and `rhs` are two dates out of order because one is a NaN date. `Date`
    /// derives `<=` and `>=` from its `<` (`a <= b` is `!(b < a)`), so for such a pair `<=`,
    /// `>=` and `!=` hold and `<`, `>` and `==` do not, where no ordering comparison of a NaN
    /// `Double` holds.
    package static func unorderedDates(_ lhs: RecordValue, _ rhs: RecordValue) -> Bool {
        guard case .date(let a) = lhs, case .date(let b) = rhs else { return false }
        return a.timeIntervalSinceReferenceDate.isNaN || b.timeIntervalSinceReferenceDate.isNaN
    }

    /// A total order for sorting: `compare` within a kind, the kind order across kinds, NaN last
    /// among numbers and among dates.
    package static func sortOrder(_ lhs: RecordValue, _ rhs: RecordValue) -> ComparisonResult {
        let (a, b) = (rank(lhs), rank(rhs))
        if a != b { return a < b ? .orderedAscending : .orderedDescending }
        if let result = compare(lhs, rhs) { return result }
        switch (lhs, rhs) {
        case (.array(let x), .array(let y)):
            for (u, v) in zip(x, y) {
                let result = sortOrder(u, v)
                if result != .orderedSame { return result }
            }
            return x.count == y.count ? .orderedSame : (x.count < y.count ? .orderedAscending : .orderedDescending)
        default:
            // NaN against a number (or a NaN date against a date), or maps: NaN sorts after every
            // number (date); maps are left as they are.
            let (nanL, nanR) = (isNaN(lhs), isNaN(rhs))
            if nanL != nanR { return nanL ? .orderedDescending : .orderedAscending }
            return .orderedSame
        }
    }

    private static func rank(_ value: RecordValue) -> Int {
        switch value {
        case .null: 0
        case .bool: 1
        case .int, .uint, .float, .double, .decimal: 2
        case .string, .url: 3
        case .data: 4
        case .date: 5
        case .uuid: 6
        case .array: 7
        case .map: 8
        }
    }

    private static func isNaN(_ value: RecordValue) -> Bool {
        switch value {
        case .double(let d): d.isNaN
        case .float(let f): f.isNaN
        case .date(let d): d.timeIntervalSinceReferenceDate.isNaN
        default: false
        }
    }

    private static func bytes(_ uuid: UUID) -> [UInt8] { withUnsafeBytes(of: uuid.uuid) { Array($0) } }

    private static func order(_ a: [UInt8], _ b: [UInt8]) -> ComparisonResult {
        a == b ? .orderedSame : (a.lexicographicallyPrecedes(b) ? .orderedAscending : .orderedDescending)
    }
}
