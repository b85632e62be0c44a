import Foundation

extension RecordValue {
    /// JSON text in which every stored value keeps every digit (see Protocol.md, "Values in JSON"): maps as objects
    /// (keys in stored order), arrays, strings escaped per RFC 8259, integers as numbers with all their digits,
    /// doubles and floats as their shortest round-tripping description (`0.1`, `-0.0`, `5e-324`; non-finite ones as
    /// the strings "NaN", "Infinity", "-Infinity"), decimals as JSON numbers with all their digits (NaN as the string
    /// "NaN"), dates as ISO-8601 strings in UTC with at least three fractional digits and as many more as the stored
    /// value needs to read back bit for bit (`"2026-11-29T14:15:28.123456Z"`; years past 9999 as `+YYYYY`, before 0
    /// as `-YYYY`; non-finite ones like a double's), UUIDs as uppercase strings, data as base64, URLs as strings,
    /// null. Compact (no spaces) by default; `pretty: true` indents 2.
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
            let seconds = value.timeIntervalSinceReferenceDate
            if let text = ISO8601Time.string(secondsSinceReferenceDate: seconds) {
                Self.writeString(text, to: &output)
            } else {
                Self.writeFloatingPoint(seconds, to: &output)
            }
        case .uuid(let value):
            // Its text needs no escapes.
            output.append(UInt8(ascii: "\""))
            UUIDText.append(value, to: &output)
            output.append(UInt8(ascii: "\""))
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
