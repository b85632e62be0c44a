/// The integer arithmetic the exact date conversions need (`ISO8601Time`), so that they run on `Int64` for every
/// date of the last few billion years and on `WideInteger` for the rest of what a `Double` can hold.
protocol CivilInteger: CustomStringConvertible {
    init(_ value: Int64)
    /// Parses ASCII decimal digits (at least one), with a leading `-` when `negative`.
    init(digits: Substring, negative: Bool)
    static func + (lhs: Self, rhs: Int64) -> Self
    static func * (lhs: Self, rhs: Int64) -> Self
    /// The floor quotient and the remainder (in `0..<divisor`) of a division by a positive divisor.
    func floorDivided(by divisor: Int64) -> (quotient: Self, remainder: Int64)
    var isNegative: Bool { get }
    /// The absolute value's digits.
    var magnitudeDescription: String { get }
    func negated() -> Self
    /// Whether the value is greater than `value`.
    func exceeds(_ value: Int64) -> Bool
}

extension Int64: CivilInteger {
    init(digits: Substring, negative: Bool) {
        // Callers pass at most 18 digits, which always fit.
        var value: Int64 = 0
        for byte in digits.utf8 { value = value * 10 + Int64(byte - UInt8(ascii: "0")) }
        self = negative ? -value : value
    }

    func floorDivided(by divisor: Int64) -> (quotient: Int64, remainder: Int64) {
        var quotient = self / divisor
        var remainder = self % divisor
        if remainder < 0 {
            quotient -= 1
            remainder += divisor
        }
        return (quotient, remainder)
    }

    var isNegative: Bool { self < 0 }

    var magnitudeDescription: String { String(magnitude) }

    func negated() -> Int64 { -self }

    func exceeds(_ value: Int64) -> Bool { self > value }
}
