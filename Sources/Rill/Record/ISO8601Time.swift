import Foundation

/// Exact conversions between a stored `Date` (a `Double` of seconds since 2001-01-01, `timeIntervalSinceReferenceDate`)
/// and text: ISO-8601 in UTC with as many fractional digits as the value needs to read back bit for bit, and the
/// other way from any ISO-8601 date-time or date, or a number of seconds since 1970.
///
/// No step rounds but the last one: the text is the shortest decimal that reads back as the stored `Double` (its
/// Swift description), split into whole seconds and a fraction with integer arithmetic, and text is read back by
/// building the exact decimal number of seconds since 2001 and letting `Double(_:)` round it once. Whole seconds
/// past what `Int64` can count comfortably (dates beyond about ±3 billion years, up to `Double`'s 1.8e308 seconds)
/// use `WideInteger`, so every finite date has an exact text. Computed by hand rather than with
/// `ISO8601DateFormatter`, which keeps milliseconds only and is slow.
///
/// The one reader and writer of ISO-8601 text in Rill: record JSON, the query language's date literals
/// (`Leniency.queryLiteral`), query descriptions and the daemon's log lines all go through it.
package enum ISO8601Time {
    /// Shapes a reader accepts besides a date-time with seconds and a zone, and a calendar date.
    package struct Leniency: OptionSet, Sendable {
        package let rawValue: Int
        package init(rawValue: Int) { self.rawValue = rawValue }

        /// A time without seconds: `2020-01-01T10:30Z`.
        package static let omittedSeconds = Leniency(rawValue: 1 << 0)
        /// A time without a zone, read as UTC: `2020-01-01T10:30:00`.
        package static let omittedZone = Leniency(rawValue: 1 << 1)
        /// An offset of whole hours, without minutes, at the end: `2020-01-01T10:30:00+02`.
        package static let hourOffset = Leniency(rawValue: 1 << 2)
        /// What the query language takes as a date literal (see `Documentation/QueryLanguage.md`).
        package static let queryLiteral: Leniency = [.omittedSeconds, .omittedZone, .hourOffset]
    }

    /// Seconds from 0000-03-01 (where the era arithmetic starts, so leap days fall at the end of a year) to
    /// 2001-01-01.
    private static let referenceFromEraStart: Int64 = 730_791 * 86_400
    /// Seconds in 400 Gregorian years, which repeat exactly.
    private static let secondsPerEra: Int64 = 146_097 * 86_400
    /// Seconds from 1970-01-01 to 2001-01-01.
    static let referenceFrom1970: Int64 = 978_307_200

    /// Whole seconds with at most this many digits are counted in `Int64`.
    private static let narrowDigits = 15

    // MARK: - Writing

    /// `YYYY-MM-DDTHH:MM:SS.fffZ`, with at least three fractional digits and as many more as the value needs (a
    /// year before 0 as `-YYYY`, after 9999 as `+YYYYY…`); nil when `seconds` is not finite.
    ///
    /// - Parameter fractionDigits: when set, exactly this many fractional digits, the rest cut off (the time
    ///   rounded down, as Foundation's `Date.ISO8601FormatStyle` does); with 0, no fraction and no point.
    package static func string(secondsSinceReferenceDate seconds: Double, fractionDigits: Int? = nil) -> String? {
        guard let digits = DecimalDigits(seconds) else { return nil }
        if digits.integer.count <= narrowDigits {
            return string(digits.floorAndFraction(as: Int64.self), fractionDigits: fractionDigits)
        }
        return string(digits.floorAndFraction(as: WideInteger.self), fractionDigits: fractionDigits)
    }

    /// The text of `date`, as `string(secondsSinceReferenceDate:fractionDigits:)` writes it (a date whose seconds
    /// are not finite as the seconds' description, `nan` or `inf`).
    package static func string(_ date: Date, fractionDigits: Int? = nil) -> String {
        let seconds = date.timeIntervalSinceReferenceDate
        return string(secondsSinceReferenceDate: seconds, fractionDigits: fractionDigits) ?? seconds.description
    }

    private static func string<I: CivilInteger>(
        _ split: (floor: I, fraction: Substring), fractionDigits: Int?
    ) -> String {
        let (era, secondOfEra) = (split.floor + referenceFromEraStart).floorDivided(by: secondsPerEra)
        let dayOfEra = secondOfEra / 86_400
        let secondOfDay = secondOfEra % 86_400
        let yearOfEra = (dayOfEra - dayOfEra / 1460 + dayOfEra / 36524 - dayOfEra / 146_096) / 365
        let dayOfYear = dayOfEra - (365 * yearOfEra + yearOfEra / 4 - yearOfEra / 100)
        let monthIndex = (5 * dayOfYear + 2) / 153
        let day = dayOfYear - (153 * monthIndex + 2) / 5 + 1
        let month = monthIndex < 10 ? monthIndex + 3 : monthIndex - 9
        let year = era * 400 + (yearOfEra + (month <= 2 ? 1 : 0))
        var text: [UInt8] = []
        text.reserveCapacity(28 + split.fraction.utf8.count)
        if year.isNegative {
            text.append(UInt8(ascii: "-"))
        } else if year.exceeds(9999) {
            text.append(UInt8(ascii: "+"))
        }
        let yearDigits = year.magnitudeDescription.utf8
        text.append(contentsOf: repeatElement(UInt8(ascii: "0"), count: max(0, 4 - yearDigits.count)))
        text.append(contentsOf: yearDigits)
        func append(_ separator: Unicode.Scalar, _ twoDigits: Int64) {
            text.append(UInt8(ascii: separator))
            text.append(UInt8(ascii: "0") + UInt8(twoDigits / 10))
            text.append(UInt8(ascii: "0") + UInt8(twoDigits % 10))
        }
        append("-", month)
        append("-", day)
        append("T", secondOfDay / 3600)
        append(":", secondOfDay / 60 % 60)
        append(":", secondOfDay % 60)
        // At least milliseconds, so that common dates keep the width they always had.
        let width = fractionDigits ?? max(3, split.fraction.utf8.count)
        if width > 0 {
            text.append(UInt8(ascii: "."))
            text.append(contentsOf: split.fraction.utf8.prefix(width))
            text.append(contentsOf: repeatElement(UInt8(ascii: "0"), count: max(0, width - split.fraction.utf8.count)))
        }
        text.append(UInt8(ascii: "Z"))
        return String(decoding: text, as: UTF8.self)
    }

    // MARK: - Reading

    /// The seconds since 2001 of an ISO-8601 date-time (`2020-01-01T00:00:00Z`, any number of fractional digits,
    /// `Z` or an offset such as `+02:00`; years of more than four digits with a sign, `-0044-03-15T…`) or a
    /// calendar date (`2020-01-01`, midnight UTC), rounded once to the nearest `Double`; nil for other text.
    ///
    /// - Parameter leniency: the shorter shapes to accept as well (none by default).
    package static func secondsSinceReferenceDate(
        parsing text: some StringProtocol, accepting leniency: Leniency = []
    ) -> Double? {
        var scanner = Scanner(Array(text.utf8))
        let negative = scanner.take("-")
        let signed = negative || scanner.take("+")
        // Without a sign a year has four digits; with one, four or more (ISO 8601's expanded years).
        guard let yearDigits = scanner.digits(minimum: 4, maximum: signed ? 400 : 4) else { return nil }
        guard scanner.take("-"), let month = scanner.number(digits: 2), (1...12).contains(month),
            scanner.take("-"), let day = scanner.number(digits: 2), day >= 1
        else { return nil }
        var secondOfDay: Int64 = 0
        var fraction: Substring = ""
        var offset: Int64 = 0
        if !scanner.isAtEnd {
            guard scanner.take("T") || scanner.take("t") || scanner.take(" "),
                let hour = scanner.number(digits: 2), hour < 24, scanner.take(":"),
                let minute = scanner.number(digits: 2), minute < 60
            else { return nil }
            secondOfDay = hour * 3600 + minute * 60
            if scanner.take(":") {
                guard let second = scanner.number(digits: 2), second < 60 else { return nil }
                secondOfDay += second
                if scanner.take(".") || scanner.take(",") {
                    guard let digits = scanner.digits(minimum: 1, maximum: 2000) else { return nil }
                    fraction = digits
                    while fraction.last == "0" { fraction.removeLast() }
                }
            } else if !leniency.contains(.omittedSeconds) {
                return nil
            }
            if scanner.take("Z") || scanner.take("z") {
                offset = 0
            } else if scanner.isAtEnd, leniency.contains(.omittedZone) {
                offset = 0
            } else {
                let sign: Int64
                if scanner.take("+") {
                    sign = 1
                } else if scanner.take("-") {
                    sign = -1
                } else {
                    return nil
                }
                guard let hours = scanner.number(digits: 2), hours < 24 else { return nil }
                var minutes: Int64 = 0
                if !scanner.isAtEnd || !leniency.contains(.hourOffset) {
                    _ = scanner.take(":")
                    guard let value = scanner.number(digits: 2), value < 60 else { return nil }
                    minutes = value
                }
                offset = sign * (hours * 3600 + minutes * 60)
            }
            guard scanner.isAtEnd else { return nil }
        }
        let digits = yearDigits.drop { $0 == "0" }
        if digits.count <= 9 {
            let year = Int64(digits: digits.isEmpty ? "0" : digits, negative: negative)
            guard let seconds = seconds(year: year, month: month, day: day, secondOfDay: secondOfDay - offset)
            else { return nil }
            return double(DecimalDigits.joining(seconds, fraction: fraction))
        }
        let year = WideInteger(digits: digits, negative: negative)
        guard let seconds = seconds(year: year, month: month, day: day, secondOfDay: secondOfDay - offset)
        else { return nil }
        return double(DecimalDigits.joining(seconds, fraction: fraction))
    }

    /// The seconds since 2001 of a number of seconds since 1970 given as its digits (a JSON number), rounded once.
    static func secondsSinceReferenceDate(secondsSince1970 digits: DecimalDigits) -> Double? {
        if digits.integer.count <= narrowDigits {
            let (whole, fraction) = digits.floorAndFraction(as: Int64.self)
            return double(DecimalDigits.joining(whole + -referenceFrom1970, fraction: fraction))
        }
        let (whole, fraction) = digits.floorAndFraction(as: WideInteger.self)
        return double(DecimalDigits.joining(whole + -referenceFrom1970, fraction: fraction))
    }

    /// Whole seconds since 2001 at the start of a day, plus `secondOfDay` (which an offset may take out of the
    /// day); nil when the day is not in the month.
    private static func seconds<I: CivilInteger>(
        year: I, month: Int64, day: Int64, secondOfDay: Int64
    ) -> I? {
        let isLeap: Bool
        let (_, remainder4) = year.floorDivided(by: 4)
        let (_, remainder100) = year.floorDivided(by: 100)
        let (_, remainder400) = year.floorDivided(by: 400)
        isLeap = remainder4 == 0 && (remainder100 != 0 || remainder400 == 0)
        let monthLengths: [Int64] = [31, isLeap ? 29 : 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31]
        guard day <= monthLengths[Int(month - 1)] else { return nil }
        let (era, yearOfEra) = (year + (month <= 2 ? -1 : 0)).floorDivided(by: 400)
        let dayOfYear = (153 * (month > 2 ? month - 3 : month + 9) + 2) / 5 + day - 1
        let dayOfEra = yearOfEra * 365 + yearOfEra / 4 - yearOfEra / 100 + dayOfYear
        return era * secondsPerEra + (dayOfEra * 86_400 + secondOfDay - referenceFromEraStart)
    }

    private static func double(_ digits: DecimalDigits) -> Double? {
        Double(digits.text)
    }

    /// Reads ASCII text byte by byte.
    private struct Scanner {
        let bytes: [UInt8]
        var position = 0

        init(_ bytes: [UInt8]) { self.bytes = bytes }

        var isAtEnd: Bool { position == bytes.count }

        mutating func take(_ character: Unicode.Scalar) -> Bool {
            guard position < bytes.count, bytes[position] == UInt8(ascii: character) else { return false }
            position += 1
            return true
        }

        mutating func digits(minimum: Int, maximum: Int) -> Substring? {
            let start = position
            while position < bytes.count, position - start < maximum,
                bytes[position] >= UInt8(ascii: "0"), bytes[position] <= UInt8(ascii: "9")
            {
                position += 1
            }
            guard position - start >= minimum else { return nil }
            return Substring(decoding: bytes[start..<position], as: UTF8.self)
        }

        mutating func number(digits count: Int) -> Int64? {
            guard let text = digits(minimum: count, maximum: count) else { return nil }
            return Int64(digits: text, negative: false)
        }
    }
}
