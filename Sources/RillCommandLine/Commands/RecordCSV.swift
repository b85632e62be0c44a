import Foundation
import Rill

/// Records as CSV (RFC 4180): a header row of the columns `RecordTable` shows, then one row per
/// record.
///
/// - Lines end with CRLF, as RFC 4180 writes them (the last line too).
/// - A field is quoted when it holds a comma, a double quote, a CR or an LF, its double quotes
///   doubled; an empty string is quoted (`""`), so that it differs from a null or missing field,
///   which is empty and unquoted.
/// - Strings and URLs are their text; nested values, arrays and every other kind are their JSON
///   text (`RecordValue.jsonString()`), except that a value JSON writes as a string (a date, a
///   UUID, data as base64, a NaN or an infinity) is that string's text, without JSON's quotes.
///
/// The header is known once every record is; the rows are then rendered one at a time, so the
/// output never holds more than one row besides the records.
struct RecordCSV {
    /// The line end of every row.
    static let lineEnd = "\r\n"

    var columns: [String]

    /// The columns of `records`: their top-level fields, in order of first appearance.
    init(_ records: [RecordValue]) { columns = RecordTable.columns(of: records) }

    /// The header row, with its line end; empty when there are no columns (no records).
    func header() -> String {
        columns.isEmpty ? "" : Self.line(columns.map(Self.field))
    }

    /// The record's row, with its line end: a field per column.
    func row(_ record: RecordValue) -> String {
        guard case .map(let fields) = record else { return Self.line(columns.map { _ in "" }) }
        return Self.line(
            columns.map { column in
                fields.first(where: { $0.name == column }).map { Self.field($0.value) } ?? ""
            })
    }

    // MARK: - Fields

    private static func line(_ fields: [String]) -> String { fields.joined(separator: ",") + lineEnd }

    /// The field of a value: empty for a null.
    private static func field(_ value: RecordValue) -> String {
        switch value {
        case .null: ""
        case .string(let text), .url(let text): field(text)
        case .array, .map: field(value.jsonString())
        default: field(scalarText(value))
        }
    }

    /// The text of a scalar other than a string: a number's JSON, and, for one that JSON writes
    /// as a string (a date, a UUID, data, a NaN), that string's text.
    static func scalarText(_ value: RecordValue) -> String {
        unquotedJSON(value.jsonString())
    }

    /// A text as a field: quoted when it must be, or when it is empty.
    private static func field(_ text: String) -> String {
        let mustQuote =
            text.isEmpty
            || text.utf8.contains { $0 == UInt8(ascii: ",") || $0 == UInt8(ascii: "\"") || $0 == 0x0A || $0 == 0x0D }
        guard mustQuote else { return text }
        return "\"" + text.replacingOccurrences(of: "\"", with: "\"\"") + "\""
    }

    /// The text of a JSON string (`"…"`), or `json` itself when it is not one (a number).
    private static func unquotedJSON(_ json: String) -> String {
        guard json.hasPrefix("\""), case .string(let text)? = try? JSONReader.parse(Array(json.utf8)) else {
            return json
        }
        return text
    }
}
