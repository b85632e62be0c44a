import Foundation

/// ISO-8601 dates as the language writes them: a calendar date (`2024-05-01`, midnight UTC) or a date-time whose
/// seconds, zone and offset minutes may be left out (`2024-05-01T10:30`, read as UTC; `…+02`). Read by
/// `ISO8601Time`, as record JSON is, so a literal and a stored date of the same text are the same `Date`.
enum QueryDateLiteral {
    static func parse(_ characters: [Character]) -> Date? {
        ISO8601Time.secondsSinceReferenceDate(parsing: String(characters), accepting: .queryLiteral)
            .map(Date.init(timeIntervalSinceReferenceDate:))
    }
}
