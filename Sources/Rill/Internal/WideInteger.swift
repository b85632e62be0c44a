/// A signed integer of any size: the whole seconds of a `Date` far beyond `Int64` (a `Double` reaches 1.8e308), so
/// that its JSON text is exact.
///
/// Only what `ISO8601Time` needs: adding and multiplying by an `Int64`, floor division by a positive one, and
/// decimal text both ways. The magnitude is kept in base-10⁹ limbs, least significant first, so decimal text
/// converts limb by limb.
struct WideInteger: CivilInteger, Equatable {
    /// Never true for zero, so zero has one representation.
    private(set) var isNegative: Bool
    /// Base-10⁹ digits, least significant first, with no zero limb at the top (zero is empty).
    private var limbs: [UInt32]

    private static let base: UInt64 = 1_000_000_000

    init(_ value: Int64) {
        var magnitude = value.magnitude
        limbs = []
        while magnitude > 0 {
            limbs.append(UInt32(magnitude % Self.base))
            magnitude /= Self.base
        }
        isNegative = value < 0
    }

    init(digits: Substring, negative: Bool) {
        let bytes = Array(digits.utf8)
        limbs = []
        limbs.reserveCapacity(bytes.count / 9 + 1)
        var end = bytes.count
        while end > 0 {
            let start = max(0, end - 9)
            var limb: UInt32 = 0
            for byte in bytes[start..<end] { limb = limb * 10 + UInt32(byte - UInt8(ascii: "0")) }
            limbs.append(limb)
            end = start
        }
        isNegative = false
        normalize()
        isNegative = negative && !limbs.isEmpty
    }

    private init(negative: Bool, limbs: [UInt32]) {
        self.limbs = limbs
        isNegative = false
        normalize()
        isNegative = negative && !self.limbs.isEmpty
    }

    private mutating func normalize() {
        while limbs.last == 0 { limbs.removeLast() }
    }

    // MARK: - Arithmetic

    static func + (lhs: WideInteger, rhs: Int64) -> WideInteger {
        let other = WideInteger(rhs)
        if lhs.isNegative == other.isNegative || other.limbs.isEmpty || lhs.limbs.isEmpty {
            let negative = lhs.limbs.isEmpty ? other.isNegative : lhs.isNegative
            return WideInteger(negative: negative, limbs: add(lhs.limbs, other.limbs))
        }
        if compare(lhs.limbs, other.limbs) >= 0 {
            return WideInteger(negative: lhs.isNegative, limbs: subtract(lhs.limbs, other.limbs))
        }
        return WideInteger(negative: other.isNegative, limbs: subtract(other.limbs, lhs.limbs))
    }

    /// `rhs` must not be negative (no caller needs it).
    static func * (lhs: WideInteger, rhs: Int64) -> WideInteger {
        precondition(rhs >= 0, "WideInteger multiplies by non-negative factors only")
        // A factor below 2^34 keeps limb × factor + carry below 2^64.
        precondition(rhs < 1 << 34, "WideInteger multiplies by factors below 2^34 only")
        let factor = UInt64(rhs)
        var result: [UInt32] = []
        result.reserveCapacity(lhs.limbs.count + 2)
        var carry: UInt64 = 0
        for limb in lhs.limbs {
            let product = UInt64(limb) * factor + carry
            result.append(UInt32(product % base))
            carry = product / base
        }
        while carry > 0 {
            result.append(UInt32(carry % base))
            carry /= base
        }
        return WideInteger(negative: lhs.isNegative, limbs: result)
    }

    func floorDivided(by divisor: Int64) -> (quotient: WideInteger, remainder: Int64) {
        precondition(divisor > 0 && divisor < 1 << 34, "WideInteger divides by positive divisors below 2^34 only")
        let divisor64 = UInt64(divisor)
        var quotient = [UInt32](repeating: 0, count: limbs.count)
        var remainder: UInt64 = 0
        for index in limbs.indices.reversed() {
            let current = remainder * Self.base + UInt64(limbs[index])
            quotient[index] = UInt32(current / divisor64)
            remainder = current % divisor64
        }
        let magnitude = WideInteger(negative: false, limbs: quotient)
        guard isNegative else { return (magnitude, Int64(remainder)) }
        if remainder == 0 { return (magnitude.negated(), 0) }
        return ((magnitude + 1).negated(), divisor - Int64(remainder))
    }

    func negated() -> WideInteger {
        WideInteger(negative: !isNegative, limbs: limbs)
    }

    func exceeds(_ value: Int64) -> Bool {
        let other = WideInteger(value)
        if isNegative != other.isNegative { return other.isNegative }
        let order = Self.compare(limbs, other.limbs)
        return isNegative ? order < 0 : order > 0
    }

    // MARK: - Text

    var magnitudeDescription: String {
        guard let top = limbs.last else { return "0" }
        var text = String(top)
        for limb in limbs.dropLast().reversed() {
            let digits = String(limb)
            text += String(repeating: "0", count: 9 - digits.count) + digits
        }
        return text
    }

    var description: String { (isNegative ? "-" : "") + magnitudeDescription }

    // MARK: - Magnitudes

    private static func compare(_ lhs: [UInt32], _ rhs: [UInt32]) -> Int {
        if lhs.count != rhs.count { return lhs.count < rhs.count ? -1 : 1 }
        for index in lhs.indices.reversed() where lhs[index] != rhs[index] {
            return lhs[index] < rhs[index] ? -1 : 1
        }
        return 0
    }

    private static func add(_ lhs: [UInt32], _ rhs: [UInt32]) -> [UInt32] {
        var result: [UInt32] = []
        result.reserveCapacity(max(lhs.count, rhs.count) + 1)
        var carry: UInt64 = 0
        for index in 0..<max(lhs.count, rhs.count) {
            let sum = UInt64(index < lhs.count ? lhs[index] : 0) + UInt64(index < rhs.count ? rhs[index] : 0) + carry
            result.append(UInt32(sum % base))
            carry = sum / base
        }
        if carry > 0 { result.append(UInt32(carry)) }
        return result
    }

    /// `lhs - rhs` for `lhs >= rhs`.
    private static func subtract(_ lhs: [UInt32], _ rhs: [UInt32]) -> [UInt32] {
        var result = lhs
        var borrow: Int64 = 0
        for index in result.indices {
            var difference = Int64(lhs[index]) - Int64(index < rhs.count ? rhs[index] : 0) - borrow
            borrow = 0
            if difference < 0 {
                difference += Int64(base)
                borrow = 1
            }
            result[index] = UInt32(difference)
        }
        return result
    }
}
