import Foundation

/// ISO-8601 dates as the language writes them.
enum QueryDateLiteral {
    /// Seconds from 1970-01-01 to 2001-01-01, Foundation's reference date.
    static let referenceOffset = 978_307_200

    static func parse(_ characters: [Character]) -> Date? {
        var index = 0
        func number(_ count: Int) -> Int? {
            guard index + count <= characters.count else { return nil }
            var value = 0
            for character in characters[index..<index + count] {
                guard character.isASCIIDigit, let digit = character.wholeNumberValue else { return nil }
                value = value * 10 + digit
            }
            index += count
            return value
        }
        func take(_ options: Character...) -> Bool {
            guard index < characters.count, options.contains(characters[index]) else { return false }
            index += 1
            return true
        }

        guard let year = number(4), take("-"), let month = number(2), take("-"), let day = number(2),
            (1...12).contains(month), day >= 1, day <= daysIn(month: month, year: year)
        else { return nil }
        var seconds = daysSinceEpoch(year: year, month: month, day: day) * 86_400
        var fraction = 0.0
        if index < characters.count {
            guard take("T", "t"), let hour = number(2), take(":"), let minute = number(2), hour < 24, minute < 60
            else { return nil }
            seconds += hour * 3_600 + minute * 60
            if take(":") {
                guard let second = number(2), second < 60 else { return nil }
                seconds += second
                if take(".") {
                    let digitsStart = index
                    while index < characters.count, characters[index].isASCIIDigit { index += 1 }
                    guard index > digitsStart, let value = Double("0." + String(characters[digitsStart..<index]))
                    else { return nil }
                    fraction = value
                }
            }
            if take("Z", "z") {
                // UTC.
            } else if index < characters.count {
                let sign: Int
                if take("+") {
                    sign = 1
                } else if take("-") {
                    sign = -1
                } else {
                    return nil
                }
                guard let hours = number(2), hours < 24 else { return nil }
                var minutes = 0
                if index < characters.count {
                    _ = take(":")
                    guard let value = number(2), value < 60 else { return nil }
                    minutes = value
                }
                seconds -= sign * (hours * 3_600 + minutes * 60)
            }
            guard index == characters.count else { return nil }
        }
        return Date(timeIntervalSinceReferenceDate: Double(seconds - referenceOffset) + fraction)
    }

    static func isLeap(_ year: Int) -> Bool {
        year % 4 == 0 && (year % 100 != 0 || year % 400 == 0)
    }

    static func daysIn(month: Int, year: Int) -> Int {
        switch month {
        case 2: isLeap(year) ? 29 : 28
        case 4, 6, 9, 11: 30
        default: 31
        }
    }

    /// Days from 1970-01-01 in the proleptic Gregorian calendar.
    static func daysSinceEpoch(year: Int, month: Int, day: Int) -> Int {
        let shiftedYear = month <= 2 ? year - 1 : year
        let era = (shiftedYear >= 0 ? shiftedYear : shiftedYear - 399) / 400
        let yearOfEra = shiftedYear - era * 400
        let dayOfYear = (153 * ((month + 9) % 12) + 2) / 5 + day - 1
        let dayOfEra = yearOfEra * 365 + yearOfEra / 4 - yearOfEra / 100 + dayOfYear
        return era * 146_097 + dayOfEra - 719_468
    }
}
