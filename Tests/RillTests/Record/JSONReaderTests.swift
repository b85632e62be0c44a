import Foundation
import RillTestSupport
import RillWorkloads
import Testing

@testable import Rill

/// The JSON reader the daemon and the tool take input with: round trips with the JSON writer,
/// exact errors, and no crash on any input.
@Suite struct JSONReaderTests {
    static func randomValue(_ random: inout SeededGenerator, depth: Int = 0) -> RecordValue {
        let scalars = [
            "", "plain", "café", "naïve ñandú", "emoji 🦀", "quote \" backslash \\ slash /", "tab\tnew\nline\r",
            "\u{0001}\u{001F}", "𝄞",
        ]
        switch Int.random(in: 0..<(depth > 3 ? 5 : 8), using: &random) {
        case 0: return .null
        case 1: return .bool(Bool.random(using: &random))
        case 2: return .int(Int64.random(in: Int64.min...Int64.max, using: &random))
        case 3:
            let value = Double(bitPattern: UInt64.random(in: 0...UInt64.max, using: &random))
            return .double(value.isFinite && value.rounded() != value ? value : 0.5)
        case 4: return .string(scalars.randomElement(using: &random)!)
        case 5: return .uint(UInt64.random(in: UInt64(Int64.max) + 1...UInt64.max, using: &random))
        case 6:
            return .array(
                (0..<Int.random(in: 0...4, using: &random)).map { _ in randomValue(&random, depth: depth + 1) })
        default:
            return .map(
                (0..<Int.random(in: 0...4, using: &random)).map { index in
                    RecordField(
                        name: "k\(index)\(scalars.randomElement(using: &random)!)",
                        value: randomValue(&random, depth: depth + 1))
                })
        }
    }

    @Test func writtenJSONReadsBackTheSame() throws {
        var random = SeededGenerator(label: "json round trip")
        for _ in 0..<3_000 {
            let value = Self.randomValue(&random)
            for pretty in [false, true] {
                let text = value.jsonString(pretty: pretty)
                #expect(try JSONReader.parse(Array(text.utf8)) == Self.asRead(value), "\(text)")
            }
        }
    }

    /// What the reader gives for a value the writer wrote: numbers that are not integers come back as their text.
    static func asRead(_ value: RecordValue) -> RecordValue {
        switch value {
        case .double(let double): .decimal(double.description)
        case .array(let elements): .array(elements.map(asRead))
        case .map(let fields): .map(fields.map { RecordField(name: $0.name, value: asRead($0.value)) })
        default: value
        }
    }

    @Test func numbersKeepTheirKindAndEveryDigit() throws {
        #expect(try JSONReader.parse(Array("42".utf8)) == .int(42))
        #expect(try JSONReader.parse(Array("-0".utf8)) == .int(0))
        #expect(try JSONReader.parse(Array("9223372036854775808".utf8)) == .uint(9_223_372_036_854_775_808))
        // Other numbers keep their text until the field they go to says what they are.
        #expect(try JSONReader.parse(Array("1.5e3".utf8)) == .decimal("1.5e3"))
        #expect(try JSONReader.parse(Array("1E-2".utf8)) == .decimal("1E-2"))
        #expect(
            try JSONReader.parse(Array("12345678901234567890.123456789".utf8))
                == .decimal("12345678901234567890.123456789"))
        #expect(try JSONReader.parse(Array("18446744073709551616".utf8)) == .decimal("18446744073709551616"))
        #expect(try JSONReader.parse(Array("1e999".utf8)) == .decimal("1e999"))
        #expect(try JSONReader.parse(Array("[\"\\u00e9\\ud834\\udd1e\"]".utf8)) == .array([.string("é𝄞")]))
    }

    @Test func errorsNameTheLineAndColumn() {
        let cases: [(String, Int, Int, String)] = [
            ("", 1, 1, "expected a value, found the end"),
            ("{", 1, 2, "expected a string key"),
            ("{\"a\" 1}", 1, 6, "expected ':'"),
            ("{\"a\":1,}", 1, 8, "expected a string key"),
            ("[1 2]", 1, 4, "expected ',' or ']'"),
            ("[1,\n  tru]", 2, 3, "expected a value"),
            ("01", 1, 1, "cannot start with 0"),
            ("1.", 1, 1, "digits after '.'"),
            ("1e", 1, 1, "digits in its exponent"),
            ("-", 1, 1, "needs digits"),
            ("\"abc", 1, 1, "not closed"),
            ("\"a\tb\"", 1, 3, "control character"),
            ("\"\\x\"", 1, 2, "unknown escape"),
            ("\"\\ud834\"", 1, 8, "lone surrogate"),
            ("\"\\u12\"", 1, 4, "four hexadecimal digits"),
            ("{\"a\":1,\"a\":2}", 1, 8, "appears twice"),
            ("1 2", 1, 3, "unexpected text after the value"),
            ("nul", 1, 1, "expected a value"),
        ]
        for (text, line, column, message) in cases {
            do {
                _ = try JSONReader.parse(Array(text.utf8))
                Issue.record("\(text.debugDescription) parsed")
            } catch {
                #expect(error.line == line && error.column == column, "\(text.debugDescription): \(error)")
                #expect(error.message.contains(message), "\(text.debugDescription): \(error)")
            }
        }
        #expect(throws: JSONReader.Error.self) { try JSONReader.parse(Array(String(repeating: "[", count: 100).utf8)) }
        #expect(throws: JSONReader.Error.self) { try JSONReader.parse([0x22, 0xFF, 0x22]) }
    }

    @Test func linesNameTheLineOfTheError() {
        #expect(throws: JSONReader.Error.self) { try JSONReader.parseLines(Array("{}\n\n[1,]\n".utf8)) }
        do {
            _ = try JSONReader.parseLines(Array("{}\n\n[1,]\n".utf8))
        } catch {
            #expect(error.line == 3)
        }
        #expect((try? JSONReader.parseLines(Array("1\n\n  \n2\n".utf8))) == [.int(1), .int(2)])
    }

    @Test func anyBytesGiveAValueOrAnError() {
        var random = SeededGenerator(label: "json fuzz")
        let pieces = Array("{}[],:\"\\/ 0123456789.eE+-truefalsenull\\u00e9\n\t".utf8)
        var parsed = 0
        for round in 0..<20_000 {
            var bytes: [UInt8]
            if round % 2 == 0 {
                bytes = (0..<Int.random(in: 0...40, using: &random)).map { _ in pieces.randomElement(using: &random)! }
            } else {
                // A valid document with a few bytes changed.
                bytes = Array(Self.randomValue(&random).jsonString().utf8)
                for _ in 0..<Int.random(in: 1...3, using: &random) where !bytes.isEmpty {
                    bytes[Int.random(in: 0..<bytes.count, using: &random)] = UInt8.random(in: 0...255, using: &random)
                }
            }
            if (try? JSONReader.parse(bytes)) != nil { parsed += 1 }
        }
        #expect(parsed > 0)
    }
}
