/// A finite decimal number as the digits that write it exactly: a JSON number's text, a Decimal's description, or a
/// Double's shortest round-tripping description, in positional form (no exponent).
///
/// Equal numbers have equal digits (no leading zeros in `integer`, no trailing zeros in `fraction`, zero never
/// negative), so `==` is numeric equality. Used where a number must keep every digit: a decimal field checks that a
/// `Decimal` holds the given number exactly, and a date's seconds are split into whole seconds and a fraction.
struct DecimalDigits: Equatable {
    /// The sign; false for zero.
    private(set) var isNegative: Bool
    /// The digits before the point, without leading zeros ("" for a number below 1).
    private(set) var integer: Substring
    /// The digits after the point, without trailing zeros.
    private(set) var fraction: Substring

    /// Exponents past this are refused rather than written out (no value Rill stores needs more than about 1,100
    /// positional digits).
    private static let maximumExponent = 4_000

    /// Parses a number written in the JSON grammar (leading zeros tolerated), which also covers the descriptions of
    /// finite `Double`, `Float` and `Decimal` values; nil for anything else, or for an exponent beyond ±4,000.
    init?(_ text: some StringProtocol) {
        let bytes = Array(text.utf8)
        var index = 0
        func isDigit(_ byte: UInt8) -> Bool { byte >= UInt8(ascii: "0") && byte <= UInt8(ascii: "9") }
        var negative = false
        if index < bytes.count, bytes[index] == UInt8(ascii: "-") {
            negative = true
            index += 1
        }
        var mantissa: [UInt8] = []
        var pointOffset: Int?
        while index < bytes.count {
            let byte = bytes[index]
            if isDigit(byte) {
                mantissa.append(byte)
            } else if byte == UInt8(ascii: "."), pointOffset == nil, !mantissa.isEmpty {
                pointOffset = mantissa.count
            } else {
                break
            }
            index += 1
        }
        guard !mantissa.isEmpty, pointOffset != mantissa.count else { return nil }
        var exponent = 0
        if index < bytes.count, bytes[index] == UInt8(ascii: "e") || bytes[index] == UInt8(ascii: "E") {
            index += 1
            var exponentNegative = false
            if index < bytes.count, bytes[index] == UInt8(ascii: "+") || bytes[index] == UInt8(ascii: "-") {
                exponentNegative = bytes[index] == UInt8(ascii: "-")
                index += 1
            }
            let start = index
            while index < bytes.count, isDigit(bytes[index]) {
                exponent = min(exponent * 10 + Int(bytes[index] - UInt8(ascii: "0")), Self.maximumExponent + 1)
                index += 1
            }
            guard index > start, exponent <= Self.maximumExponent else { return nil }
            if exponentNegative { exponent = -exponent }
        }
        guard index == bytes.count else { return nil }
        // The point sits after `pointPosition` digits of the mantissa, which may be before or past its ends.
        let pointPosition = (pointOffset ?? mantissa.count) + exponent
        var integerDigits: [UInt8] = []
        var fractionDigits: [UInt8] = []
        if pointPosition <= 0 {
            fractionDigits = [UInt8](repeating: UInt8(ascii: "0"), count: -pointPosition) + mantissa
        } else if pointPosition >= mantissa.count {
            integerDigits = mantissa + [UInt8](repeating: UInt8(ascii: "0"), count: pointPosition - mantissa.count)
        } else {
            integerDigits = Array(mantissa[..<pointPosition])
            fractionDigits = Array(mantissa[pointPosition...])
        }
        let firstNonZero = integerDigits.firstIndex { $0 != UInt8(ascii: "0") } ?? integerDigits.count
        let lastNonZero = fractionDigits.lastIndex { $0 != UInt8(ascii: "0") }.map { $0 + 1 } ?? 0
        integer = Substring(decoding: integerDigits[firstNonZero...], as: UTF8.self)
        fraction = Substring(decoding: fractionDigits[..<lastNonZero], as: UTF8.self)
        isNegative = negative && !(integer.isEmpty && fraction.isEmpty)
    }

    /// The shortest digits that read back as `value` (Swift's description); nil when it is not finite.
    init?(_ value: Double) {
        guard value.isFinite else { return nil }
        self.init(value.description)
    }

    private init(isNegative: Bool, integer: Substring, fraction: Substring) {
        self.isNegative = isNegative
        self.integer = integer
        self.fraction = fraction
    }

    /// The positional text: `-12.5`, `0.001`, `7`.
    var text: String {
        (isNegative ? "-" : "") + (integer.isEmpty ? "0" : String(integer)) + (fraction.isEmpty ? "" : "." + fraction)
    }

    /// The number as its floor and what is left, in `0 ..< 1`, as fraction digits: -1.25 is -2 and 0.75.
    func floorAndFraction<I: CivilInteger>(as type: I.Type) -> (floor: I, fraction: Substring) {
        let magnitude = I(digits: integer.isEmpty ? "0" : integer, negative: false)
        guard isNegative else { return (magnitude, fraction) }
        guard !fraction.isEmpty else { return (magnitude.negated(), fraction) }
        return ((magnitude + 1).negated(), Self.complement(fraction))
    }

    /// The number `whole + 0.fraction`, for a `fraction` as `floorAndFraction` gives it.
    static func joining<I: CivilInteger>(_ whole: I, fraction: Substring) -> DecimalDigits {
        guard whole.isNegative, !fraction.isEmpty else {
            return DecimalDigits(
                isNegative: whole.isNegative, integer: Self.trimmed(whole.magnitudeDescription), fraction: fraction)
        }
        // -n + 0.f = -((n - 1) + (1 - 0.f))
        return DecimalDigits(
            isNegative: true, integer: Self.trimmed((whole + 1).magnitudeDescription),
            fraction: Self.complement(fraction))
    }

    /// The digits of `1 - 0.digits`, for digits without trailing zeros (so the last one is not 0).
    private static func complement(_ digits: Substring) -> Substring {
        var bytes = digits.utf8.map { UInt8(ascii: "9") - ($0 - UInt8(ascii: "0")) }
        bytes[bytes.count - 1] += 1
        return Substring(decoding: bytes, as: UTF8.self)
    }

    private static func trimmed(_ digits: String) -> Substring {
        digits == "0" ? "" : Substring(digits)
    }
}
