import Foundation

/// A number of any stored kind, compared exactly across kinds.
package enum Number {
    case int(Int64)
    case uint(UInt64)
    case double(Double)

    package init?(_ value: RecordValue) {
        switch value {
        case .int(let v): self = .int(v)
        case .uint(let v): self = .uint(v)
        case .double(let v): self = .double(v)
        case .float(let v): self = .double(Double(v))
        case .decimal(let text):
            guard let decimal = Decimal(string: text) else { return nil }
            self = .double(NSDecimalNumber(decimal: decimal).doubleValue)
        default: return nil
        }
    }

    package var recordValue: RecordValue {
        switch self {
        case .int(let v): .int(v)
        case .uint(let v): .uint(v)
        case .double(let v): .double(v)
        }
    }

    /// The value when it is an integer, widened so that arithmetic on two of them is exact.
    package var integerValue: Int128? {
        switch self {
        case .int(let v): Int128(v)
        case .uint(let v): Int128(v)
        case .double: nil
        }
    }

    package var doubleValue: Double {
        switch self {
        case .int(let v): Double(v)
        case .uint(let v): Double(v)
        case .double(let v): v
        }
    }

    /// Exact comparison; nil when either side is NaN.
    package static func compare(_ a: Number, _ b: Number) -> ComparisonResult? {
        switch (a, b) {
        case (.int(let x), .int(let y)): return order(x, y)
        case (.uint(let x), .uint(let y)): return order(x, y)
        case (.int(let x), .uint(let y)): return x < 0 ? .orderedAscending : order(UInt64(x), y)
        case (.uint(let x), .int(let y)): return y < 0 ? .orderedDescending : order(x, UInt64(y))
        case (.double(let x), .double(let y)):
            if x.isNaN || y.isNaN { return nil }
            return order(x, y)
        case (.double(let x), _): return compareDouble(x, b).map(invert)
        case (_, .double(let y)): return compareDouble(y, a)
        }
    }

    /// Compares an integer `n` with a double `d`, exactly; the result is the order of `n` relative to `d`.
    private static func compareDouble(_ d: Double, _ n: Number) -> ComparisonResult? {
        if d.isNaN { return nil }
        if d == .infinity { return .orderedAscending }
        if d == -.infinity { return .orderedDescending }
        // Split d into its integral part (exact in Int128 range for finite doubles below 2^127) and fraction.
        let integral = d.rounded(.down)
        let fraction = d - integral
        guard abs(integral) < 0x1p126 else { return integral > 0 ? .orderedAscending : .orderedDescending }
        let whole = Int128(integral)
        let value: Int128
        switch n {
        case .int(let x): value = Int128(x)
        case .uint(let x): value = Int128(x)
        case .double: preconditionFailure("integers only")
        }
        if value < whole { return .orderedAscending }
        if value > whole { return .orderedDescending }
        return fraction > 0 ? .orderedAscending : .orderedSame
    }

    private static func invert(_ result: ComparisonResult) -> ComparisonResult {
        switch result {
        case .orderedAscending: .orderedDescending
        case .orderedDescending: .orderedAscending
        case .orderedSame: .orderedSame
        }
    }

    private static func order<T: Comparable>(_ x: T, _ y: T) -> ComparisonResult {
        x == y ? .orderedSame : (x < y ? .orderedAscending : .orderedDescending)
    }
}
