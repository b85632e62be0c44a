import Foundation

extension RecordValue {
    /// JSON text: maps as objects (keys in stored order), arrays, strings escaped per RFC 8259, ints/uints/doubles as
    /// numbers (non-finite doubles/floats as the strings "NaN", "Infinity", "-Infinity"), date as ISO-8601 string with
    /// fractional seconds in UTC (e.g. "2026-11-29T14:15:28.123Z"), uuid as uppercase string, data as base64 string,
    /// url as string, decimal as a JSON number (its text), null. Compact (no spaces) by default; `pretty: true`
    /// indents 2.
    ///
    /// Dates are rounded to the millisecond. A date too far from 1970 for that (beyond roughly ±285,000 years) is
    /// written as its seconds since 1970, and a non-finite one like a non-finite double. Decimal text that is not a
    /// valid JSON number (`NaN`) is written as a string, so the output is always valid JSON.
    package func jsonString(pretty: Bool = false) -> String {
        var output: [UInt8] = []
        writeJSON(to: &output, pretty: pretty, indent: 0)
        return String(decoding: output, as: UTF8.self)
    }

    private func writeJSON(to output: inout [UInt8], pretty: Bool, indent: Int) {
        switch self {
        case .null:
            output.append(contentsOf: "null".utf8)
        case .bool(let value):
            output.append(contentsOf: (value ? "true" : "false").utf8)
        case .int(let value):
            output.append(contentsOf: String(value).utf8)
        case .uint(let value):
            output.append(contentsOf: String(value).utf8)
        case .float(let value):
            Self.writeFloatingPoint(value, to: &output)
        case .double(let value):
            Self.writeFloatingPoint(value, to: &output)
        case .string(let value), .url(let value):
            Self.writeString(value, to: &output)
        case .data(let value):
            Self.writeString(value.base64EncodedString(), to: &output)
        case .date(let value):
            let seconds = value.timeIntervalSince1970
            if let text = Self.iso8601(seconds) {
                Self.writeString(text, to: &output)
            } else {
                Self.writeFloatingPoint(seconds, to: &output)
            }
        case .uuid(let value):
            Self.writeString(value.uuidString, to: &output)
        case .decimal(let text):
            if Self.isJSONNumber(text) {
                output.append(contentsOf: text.utf8)
            } else {
                Self.writeString(text, to: &output)
            }
        case .array(let elements):
            output.append(UInt8(ascii: "["))
            for (index, element) in elements.enumerated() {
                if index > 0 { output.append(UInt8(ascii: ",")) }
                Self.newline(to: &output, pretty: pretty, indent: indent + 1)
                element.writeJSON(to: &output, pretty: pretty, indent: indent + 1)
            }
            if !elements.isEmpty { Self.newline(to: &output, pretty: pretty, indent: indent) }
            output.append(UInt8(ascii: "]"))
        case .map(let fields):
            output.append(UInt8(ascii: "{"))
            for (index, field) in fields.enumerated() {
                if index > 0 { output.append(UInt8(ascii: ",")) }
                Self.newline(to: &output, pretty: pretty, indent: indent + 1)
                Self.writeString(field.name, to: &output)
                output.append(UInt8(ascii: ":"))
                if pretty { output.append(UInt8(ascii: " ")) }
                field.value.writeJSON(to: &output, pretty: pretty, indent: indent + 1)
            }
            if !fields.isEmpty { Self.newline(to: &output, pretty: pretty, indent: indent) }
            output.append(UInt8(ascii: "}"))
        }
    }

    private static func newline(to output: inout [UInt8], pretty: Bool, indent: Int) {
        guard pretty else { return }
        output.append(UInt8(ascii: "\n"))
        output.append(contentsOf: repeatElement(UInt8(ascii: " "), count: indent * 2))
    }

    /// Swift's shortest round-tripping description is already valid JSON for finite values (`1.0`, `1e-07`).
    private static func writeFloatingPoint<F: BinaryFloatingPoint & LosslessStringConvertible>(
        _ value: F, to output: inout [UInt8]
    ) {
        if value.isNaN {
            writeString("NaN", to: &output)
        } else if value.isInfinite {
            writeString(value < 0 ? "-Infinity" : "Infinity", to: &output)
        } else {
            output.append(contentsOf: value.description.utf8)
        }
    }

    /// Writes a quoted string, escaping what RFC 8259 requires; other characters, non-ASCII included, pass as UTF-8.
    private static func writeString(_ text: String, to output: inout [UInt8]) {
        output.append(UInt8(ascii: "\""))
        for byte in text.utf8 {
            switch byte {
            case UInt8(ascii: "\""): output.append(contentsOf: #"\""#.utf8)
            case UInt8(ascii: "\\"): output.append(contentsOf: #"\\"#.utf8)
            case 0x08: output.append(contentsOf: #"\b"#.utf8)
            case 0x09: output.append(contentsOf: #"\t"#.utf8)
            case 0x0A: output.append(contentsOf: #"\n"#.utf8)
            case 0x0C: output.append(contentsOf: #"\f"#.utf8)
            case 0x0D: output.append(contentsOf: #"\r"#.utf8)
            case ..<0x20:
                let hex = Array("0123456789abcdef".utf8)
                output.append(contentsOf: #"\u00"#.utf8)
                output.append(hex[Int(byte >> 4)])
                output.append(hex[Int(byte & 0x0F)])
            default:
                output.append(byte)
            }
        }
        output.append(UInt8(ascii: "\""))
    }

    /// Formats seconds since 1970 as `YYYY-MM-DDTHH:MM:SS.mmmZ` in the proleptic Gregorian calendar; nil when the
    /// value is not finite or too large to count in milliseconds.
    ///
    /// Computed by hand rather than with `ISO8601DateFormatter`, which is slow, not `Sendable`, and cannot be
    /// shared across threads cheaply.
    static func iso8601(_ secondsSince1970: Double) -> String? {
        guard secondsSince1970.isFinite, secondsSince1970.magnitude < 9e15 else { return nil }
        let millis = Int64((secondsSince1970 * 1000).rounded())
        let millisPerDay: Int64 = 86_400_000
        var days = millis / millisPerDay
        var millisOfDay = millis % millisPerDay
        if millisOfDay < 0 {
            days -= 1
            millisOfDay += millisPerDay
        }
        let (year, month, day) = civilDate(daysSince1970: days)
        let seconds = millisOfDay / 1000
        var text = ""
        if year < 0 {
            text += "-" + padded(-year, width: 4)
        } else if year > 9999 {
            text += "+" + String(year)
        } else {
            text += padded(year, width: 4)
        }
        text += "-" + padded(month, width: 2) + "-" + padded(day, width: 2)
        text += "T" + padded(seconds / 3600, width: 2) + ":" + padded(seconds / 60 % 60, width: 2)
        text += ":" + padded(seconds % 60, width: 2) + "." + padded(millisOfDay % 1000, width: 3) + "Z"
        return text
    }

    /// Converts a day count to a Gregorian date using eras of 400 years, which repeat exactly (146,097 days).
    private static func civilDate(daysSince1970: Int64) -> (year: Int64, month: Int64, day: Int64) {
        let shifted = daysSince1970 + 719_468  // days from 0000-03-01, so leap days fall at the end of a year
        let era = (shifted >= 0 ? shifted : shifted - 146_096) / 146_097
        let dayOfEra = shifted - era * 146_097
        let yearOfEra = (dayOfEra - dayOfEra / 1460 + dayOfEra / 36524 - dayOfEra / 146_096) / 365
        let dayOfYear = dayOfEra - (365 * yearOfEra + yearOfEra / 4 - yearOfEra / 100)
        let monthIndex = (5 * dayOfYear + 2) / 153
        let day = dayOfYear - (153 * monthIndex + 2) / 5 + 1
        let month = monthIndex < 10 ? monthIndex + 3 : monthIndex - 9
        let year = yearOfEra + era * 400 + (month <= 2 ? 1 : 0)
        return (year, month, day)
    }

    private static func padded(_ value: Int64, width: Int) -> String {
        let digits = String(value)
        return digits.count >= width ? digits : String(repeating: "0", count: width - digits.count) + digits
    }

    /// Whether `text` matches the RFC 8259 number grammar: `-? (0 | [1-9][0-9]*) (. [0-9]+)? ([eE] [+-]? [0-9]+)?`.
    static func isJSONNumber(_ text: String) -> Bool {
        let bytes = Array(text.utf8)
        var index = 0
        func digits() -> Int {
            let start = index
            while index < bytes.count, bytes[index] >= UInt8(ascii: "0"), bytes[index] <= UInt8(ascii: "9") {
                index += 1
            }
            return index - start
        }
        if index < bytes.count, bytes[index] == UInt8(ascii: "-") { index += 1 }
        if index < bytes.count, bytes[index] == UInt8(ascii: "0") {
            index += 1
        } else if digits() == 0 {
            return false
        }
        if index < bytes.count, bytes[index] == UInt8(ascii: ".") {
            index += 1
            if digits() == 0 { return false }
        }
        if index < bytes.count, bytes[index] == UInt8(ascii: "e") || bytes[index] == UInt8(ascii: "E") {
            index += 1
            if index < bytes.count, bytes[index] == UInt8(ascii: "+") || bytes[index] == UInt8(ascii: "-") {
                index += 1
            }
            if digits() == 0 { return false }
        }
        return index == bytes.count
    }
}
