import Foundation
import RillTestSupport
import RillWorkloads
import Testing

@testable import Rill

/// Dates as JSON text: every stored `Double` reads back bit for bit, and the calendar agrees with Foundation's.
@Suite struct ISO8601TimeTests {
    @Test func everyFiniteDateReadsBackBitForBit() throws {
        var random = SeededGenerator(label: "iso8601 round trip")
        for round in 0..<20_000 {
            var seconds = Double(bitPattern: UInt64.random(in: 0...UInt64.max, using: &random))
            if !seconds.isFinite || round.isMultiple(of: 2) {
                seconds = Double.random(in: -1e11...1e11, using: &random)
            }
            let text = try #require(ISO8601Time.string(secondsSinceReferenceDate: seconds))
            let back = try #require(ISO8601Time.secondsSinceReferenceDate(parsing: text), "\(text)")
            #expect(back == seconds || (back == 0 && seconds == 0), "\(seconds) → \(text) → \(back)")
        }
    }

    @Test func calendarAgreesWithFoundation() throws {
        var random = SeededGenerator(label: "iso8601 calendar")
        let formatter = ISO8601DateFormatter()
        formatter.formatOptions = [.withInternetDateTime]
        for _ in 0..<5_000 {
            // Whole seconds of the years 1583 to 9999: Foundation's formatter counts earlier days in the Julian
            // calendar, where ISO 8601 (and Rill) go on with the Gregorian one.
            let seconds = Double(Int64.random(in: -13_190_860_800...252_423_993_599, using: &random))
            let date = Date(timeIntervalSinceReferenceDate: seconds)
            let foundation = formatter.string(from: date)
            let ours = try #require(ISO8601Time.string(secondsSinceReferenceDate: seconds))
            #expect(ours == foundation.dropLast() + ".000Z", "\(seconds)")
            #expect(ISO8601Time.secondsSinceReferenceDate(parsing: foundation) == seconds, "\(foundation)")
        }
    }

    @Test func fractionsAreReadAsFoundationsISO8601FormatStyleReadsThem() throws {
        var random = SeededGenerator(label: "iso8601 fractions")
        let style = Date.ISO8601FormatStyle(includingFractionalSeconds: true)
        let wholeSeconds = Date.ISO8601FormatStyle()
        func two(_ range: ClosedRange<Int>) -> String {
            let value = Int.random(in: range, using: &random)
            return value < 10 ? "0\(value)" : "\(value)"
        }
        var differing = 0
        for _ in 0..<3_000 {
            let fraction = String(
                (0..<Int.random(in: 1...9, using: &random)).map { _ in "0123456789".randomElement(using: &random)! })
            let text =
                "\(Int.random(in: 1600...9999, using: &random))-\(two(1...12))-\(two(1...28))T\(two(0...23)):\(two(0...59)):"
                + "\(two(0...59)).\(fraction)Z"
            let foundation = try style.parse(text).timeIntervalSinceReferenceDate
            // Rill rounds the text's exact value once. Foundation's value is one unit in the last
            // place away from that for about one text in a million
            // (2004-11-10T16:32:21.547527574Z: …141.54752757 against …758).
            let rill = ISO8601Time.secondsSinceReferenceDate(parsing: text)
            #expect(rill.map { abs($0 - foundation) <= foundation.ulp } == true, "\(text)")
            if rill != foundation { differing += 1 }
            // After 2001 the exact value is the whole seconds (the text without its fraction, read
            // by Foundation: an integer, exact) and the fraction's digits, which Swift's own reading
            // of a decimal rounds once.
            let whole = try wholeSeconds.parse(text.replacingOccurrences(of: ".\(fraction)", with: ""))
            if whole.timeIntervalSinceReferenceDate > 0 {
                let exact = Double("\(Int64(whole.timeIntervalSinceReferenceDate)).\(fraction)")
                #expect(rill == exact, "\(text)")
            }
        }
        #expect(differing <= 3, "\(differing) of 3,000 texts read otherwise than Foundation reads them")
    }

    /// The shapes Foundation's `Date.ISO8601FormatStyle` and Rill both write and read: the years 1582-10-15 (before
    /// it, Foundation counts days in the Julian calendar) to 9999 (after it, Foundation writes no sign), in UTC with
    /// whole seconds or fractions Foundation writes exactly (eighths of a second: it cuts the binary value, Rill
    /// the decimal one), and read with any offset.
    @Test func agreesWithFoundationsISO8601FormatStyle() throws {
        var random = SeededGenerator(label: "iso8601 format style")
        let wholeSeconds = Date.ISO8601FormatStyle()
        let fractional = Date.ISO8601FormatStyle(includingFractionalSeconds: true)
        let (first, last): (Int64, Int64) = (-13_197_600_000, 252_423_993_599)
        var seconds: [Double] = [Double(first), Double(last), Double(last) + 0.875, 0, -0.125, -978_307_200]
        for _ in 0..<3_000 {
            let whole = Double(Int64.random(in: first...last, using: &random))
            seconds.append(whole)
            seconds.append(whole + Double(Int.random(in: 1...7, using: &random)) / 8)
        }
        for value in seconds {
            let date = Date(timeIntervalSinceReferenceDate: value)
            #expect(ISO8601Time.string(secondsSinceReferenceDate: value) == fractional.format(date), "\(value)")
            #expect(ISO8601Time.string(date, fractionDigits: 3) == fractional.format(date), "\(value)")
            #expect(ISO8601Time.string(date, fractionDigits: 0) == wholeSeconds.format(date), "\(value)")
        }
        // Cutting to whole seconds rounds down, as Foundation does, whatever the fraction.
        for _ in 0..<3_000 {
            let value = Double.random(in: Double(first)...Double(last), using: &random)
            let date = Date(timeIntervalSinceReferenceDate: value)
            #expect(ISO8601Time.string(date, fractionDigits: 0) == wholeSeconds.format(date), "\(value)")
        }

        func two(_ range: ClosedRange<Int>) -> String {
            let value = Int.random(in: range, using: &random)
            return value < 10 ? "0\(value)" : "\(value)"
        }
        var texts = [
            "1582-10-15T00:00:00Z", "1582-10-15T00:00:00.000000001Z", "9999-12-31T23:59:59Z",
            "9999-12-31T23:59:59.999999999Z", "9999-12-31T23:59:59.999-14:00", "2001-01-01T00:00:00+00:00",
        ]
        for _ in 0..<3_000 {
            var text =
                "\(Int.random(in: 1583...9998, using: &random))-\(two(1...12))-\(two(1...28))T\(two(0...23)):"
                + "\(two(0...59)):\(two(0...59))"
            if Bool.random(using: &random) {
                text +=
                    "."
                    + String(
                        (0..<Int.random(in: 1...9, using: &random)).map { _ in
                            "0123456789".randomElement(using: &random)!
                        })
            }
            switch Int.random(in: 0..<3, using: &random) {
            case 0: text += "Z"
            case 1: text += (Bool.random(using: &random) ? "+" : "-") + two(0...14) + ":" + two(0...59)
            default: text += (Bool.random(using: &random) ? "+" : "-") + two(0...14) + two(0...59)
            }
            texts.append(text)
        }
        for text in texts {
            let style = text.contains(".") ? fractional : wholeSeconds
            let foundation = try style.parse(text).timeIntervalSinceReferenceDate
            #expect(ISO8601Time.secondsSinceReferenceDate(parsing: text) == foundation, "\(text)")
        }
    }

    @Test func queryLiteralsAreReadAsRecordTextIsAndMayBeShorter() throws {
        var random = SeededGenerator(label: "iso8601 query literals")
        for _ in 0..<2_000 {
            let seconds = Double.random(in: -1e11...1e11, using: &random)
            let text = try #require(ISO8601Time.string(secondsSinceReferenceDate: seconds))
            guard !text.hasPrefix("-"), !text.hasPrefix("+") else { continue }
            #expect(
                ISO8601Time.secondsSinceReferenceDate(parsing: text, accepting: .queryLiteral) == seconds, "\(text)")
        }
        let shorter: [(String, Double)] = [
            ("2001-01-01T01:30", 5_400), ("2001-01-01T01:30Z", 5_400), ("2001-01-01T01:30:00", 5_400),
            ("2001-01-01T01:30+01", 1_800), ("2001-01-01T01:30:00-01", 9_000), ("2001-01-01T01:30:00.5+01", 1_800.5),
        ]
        for (text, seconds) in shorter {
            #expect(
                ISO8601Time.secondsSinceReferenceDate(parsing: text, accepting: .queryLiteral) == seconds, "\(text)")
            #expect(ISO8601Time.secondsSinceReferenceDate(parsing: text) == nil, "\(text)")
        }
        for bad in ["2001-01-01T01", "2001-01-01T01:30+1", "2001-01-01T01:30+01:", "2001-01-01T01:30.5Z"] {
            #expect(ISO8601Time.secondsSinceReferenceDate(parsing: bad, accepting: .queryLiteral) == nil, "\(bad)")
        }
    }

    @Test func offsetsDaysAndBadTextAreRead() {
        #expect(ISO8601Time.secondsSinceReferenceDate(parsing: "2001-01-01T02:00:00.25+02:00") == 0.25)
        #expect(ISO8601Time.secondsSinceReferenceDate(parsing: "2000-12-31T23:30:00-00:30") == 0)
        #expect(ISO8601Time.secondsSinceReferenceDate(parsing: "2001-01-02") == 86_400)
        #expect(ISO8601Time.secondsSinceReferenceDate(parsing: "2001-01-01t00:00:00.000000000000000000001z") == 1e-21)
        for bad in [
            "", "2001", "2001-02-29", "2000-02-30", "2001-13-01", "2001-01-01T24:00:00Z", "2001-01-01T00:00:60Z",
            "2001-01-01T00:00:00", "2001-01-01T00:00Z", "2001-01-01T00:00:00.Z", "12001-01-01", "+01-01-01",
            "2001-01-01T00:00:00+2", "2001-01-01T00:00:00Z ",
        ] {
            #expect(ISO8601Time.secondsSinceReferenceDate(parsing: bad) == nil, "\(bad)")
        }
    }
}
