import Foundation
import RillTestSupport
import RillWorkloads
import Testing

@testable import Rill

@Suite struct IndexKeyTests {
    // MARK: - Fixtures

    /// Every class of value, with edge cases, paired with what `decode` returns for it.
    static let roundTrips: [(RecordValue, RecordValue)] = [
        (.null, .null),
        (.bool(false), .bool(false)),
        (.bool(true), .bool(true)),
        (.int(0), .int(0)),
        (.int(1), .int(1)),
        (.int(-1), .int(-1)),
        (.int(.min), .int(.min)),
        (.int(.max), .int(.max)),
        (.int(1 << 53 + 1), .int(1 << 53 + 1)),
        (.uint(0), .int(0)),
        (.uint(7), .int(7)),
        (.uint(UInt64(Int64.max) + 1), .uint(UInt64(Int64.max) + 1)),
        (.uint(.max), .uint(.max)),
        (.uint(.max - 1), .uint(.max - 1)),
        (.double(0), .int(0)),
        (.double(-0.0), .int(0)),
        (.double(3), .int(3)),
        (.double(-3), .int(-3)),
        (.double(1.5), .double(1.5)),
        (.double(-1.5), .double(-1.5)),
        (.double(0.1), .double(0.1)),
        (.double(0x1p53), .int(1 << 53)),
        (.double(0x1p63), .uint(1 << 63)),
        (.double(-0x1p63), .int(.min)),
        (.double(-9_223_372_036_854_774_784), .int(.min + 1024)),
        (.double(-9_223_372_036_854_777_856), .double(-9_223_372_036_854_777_856)),
        (.double(0x1p64), .double(0x1p64)),
        (.double(-0x1p64), .double(-0x1p64)),
        (.double(.greatestFiniteMagnitude), .double(.greatestFiniteMagnitude)),
        (.double(-.greatestFiniteMagnitude), .double(-.greatestFiniteMagnitude)),
        (.double(.leastNormalMagnitude), .double(.leastNormalMagnitude)),
        (.double(.leastNonzeroMagnitude), .double(.leastNonzeroMagnitude)),
        (.double(-.leastNonzeroMagnitude), .double(-.leastNonzeroMagnitude)),
        (.double(0x1.8p-1070), .double(0x1.8p-1070)),
        (.double(.leastNormalMagnitude.nextDown), .double(.leastNormalMagnitude.nextDown)),
        (.double(.infinity), .double(.infinity)),
        (.double(-.infinity), .double(-.infinity)),
        (.double(.nan), .double(.nan)),
        (.double(-.nan), .double(.nan)),
        (.double(.signalingNaN), .double(.nan)),
        (.float(1.5), .double(1.5)),
        (.float(0.1), .double(Double(Float(0.1)))),
        (.float(.leastNonzeroMagnitude), .double(Double(Float.leastNonzeroMagnitude))),
        (.float(.greatestFiniteMagnitude), .double(Double(Float.greatestFiniteMagnitude))),
        (.float(-.infinity), .double(-.infinity)),
        (.float(.nan), .double(.nan)),
        (.float(8), .int(8)),
        (.decimal("1.5"), .double(1.5)),
        (.decimal("-2"), .int(-2)),
        (.decimal("0.001"), .double(0.001)),
        (.decimal("NaN"), .double(.nan)),
        (.string(""), .string("")),
        (.string("a"), .string("a")),
        (.string("\0"), .string("\0")),
        (.string("a\0b\0\0"), .string("a\0b\0\0")),
        (.string("😀👍🏽 family 👨‍👩‍👧"), .string("😀👍🏽 family 👨‍👩‍👧")),
        (.string("e\u{301}"), .string("\u{E9}")),
        (.string("\u{212B}"), .string("\u{C5}")),
        (.string("\u{10FFFF}\u{FFFF}"), .string("\u{10FFFF}\u{FFFF}")),
        (.url("https://example.com/a?b=c"), .url("https://example.com/a?b=c")),
        (.url(""), .url("")),
        (.data(Data()), .data(Data())),
        (.data(Data([0])), .data(Data([0]))),
        (.data(Data([0, 0xFF, 0, 1, 0xFF])), .data(Data([0, 0xFF, 0, 1, 0xFF]))),
        (.date(Date(timeIntervalSinceReferenceDate: 0)), .date(Date(timeIntervalSinceReferenceDate: 0))),
        (.date(Date(timeIntervalSinceReferenceDate: -0.0)), .date(Date(timeIntervalSinceReferenceDate: 0))),
        (
            .date(Date(timeIntervalSinceReferenceDate: 817_654_528.123)),
            .date(Date(timeIntervalSinceReferenceDate: 817_654_528.123))
        ),
        (.date(Date(timeIntervalSinceReferenceDate: -1e9)), .date(Date(timeIntervalSinceReferenceDate: -1e9))),
        (.date(.distantFuture), .date(.distantFuture)),
        (.date(.distantPast), .date(.distantPast)),
        (
            .date(Date(timeIntervalSinceReferenceDate: .infinity)),
            .date(Date(timeIntervalSinceReferenceDate: .infinity))
        ),
        (.date(Date(timeIntervalSinceReferenceDate: -.nan)), .date(Date(timeIntervalSinceReferenceDate: .nan))),
        (
            .uuid(UUID(uuidString: "E621E1F8-C36C-495A-93FC-0C247A3E6E5F")!),
            .uuid(UUID(uuidString: "E621E1F8-C36C-495A-93FC-0C247A3E6E5F")!)
        ),
        (
            .uuid(UUID(uuidString: "00000000-0000-0000-0000-000000000000")!),
            .uuid(UUID(uuidString: "00000000-0000-0000-0000-000000000000")!)
        ),
        (
            .uuid(UUID(uuidString: "FFFFFFFF-FFFF-FFFF-FFFF-FFFFFFFFFFFF")!),
            .uuid(UUID(uuidString: "FFFFFFFF-FFFF-FFFF-FFFF-FFFFFFFFFFFF")!)
        ),
    ]

    // MARK: - Round trips and exact bytes

    @Test func everyClassRoundTripsToItsCanonicalForm() throws {
        for (value, canonical) in Self.roundTrips {
            let bytes = try key(value)
            var offset = 0
            let decoded = try bytes.withUnsafeBytes { try IndexKey.decode($0, offset: &offset) }
            #expect(decoded == canonical, "\(value)")
            #expect(offset == bytes.count, "\(value)")
            #expect(try key(decoded) == bytes, "\(value)")
        }
    }

    @Test func concatenatedValuesDecodeInSequence() throws {
        let values = Self.roundTrips.map(\.0)
        let bytes = try key(values)
        #expect(try decodeAll(bytes) == Self.roundTrips.map(\.1))
    }

    @Test func encodingsMatchTheDocumentedLayout() throws {
        #expect(try key(.null) == [0x05])
        #expect(try key(.bool(false)) == [0x10])
        #expect(try key(.bool(true)) == [0x11])
        #expect(try key(.double(-.infinity)) == [0x20])
        #expect(try key(.int(0)) == [0x22])
        #expect(try key(.double(.infinity)) == [0x24])
        #expect(try key(.float(.nan)) == [0x25])
        // 1 = 2^0 × 1.0: exponent 0 + 1074 = 0x0432, one zero group.
        #expect(try key(.int(1)) == [0x23, 0x04, 0x32, 0x00])
        #expect(try key(.int(-1)) == [0x21, 0xFB, 0xCD, 0xFF])
        // 1.5 = 2^0 × 1.1₂: the first group is 1000000₂, stored as 1000000₂ << 1 with no more groups.
        #expect(try key(.double(1.5)) == [0x23, 0x04, 0x32, 0x80])
        // 2^64 − 1 = 2^63 × 1.111…₂ (63 ones): nine groups of 7 ones, the last without the `more` bit.
        #expect(try key(.uint(.max)) == [0x23, 0x04, 0x71] + Array(repeating: 0xFF, count: 8) + [0xFE])
        #expect(try key(.double(.leastNonzeroMagnitude)) == [0x23, 0x00, 0x00, 0x00])
        #expect(try key(.string("a\0")) == [0x30, 0x61, 0x00, 0xFF, 0x00, 0x01])
        #expect(try key(.url("")) == [0x38, 0x00, 0x01])
        #expect(try key(.data(Data([0xFF, 0]))) == [0x40, 0xFF, 0x00, 0xFF, 0x00, 0x01])
        #expect(try key(.date(Date(timeIntervalSinceReferenceDate: 1))) == [0x50, 0xBF, 0xF0, 0, 0, 0, 0, 0, 0])
        let minusOne: [UInt8] = [0x50, 0x40, 0x0F] + [UInt8](repeating: 0xFF, count: 6)
        #expect(try key(.date(Date(timeIntervalSinceReferenceDate: -1))) == minusOne)
        let uuid = UUID(uuidString: "00112233-4455-6677-8899-AABBCCDDEEFF")!
        #expect(try key(.uuid(uuid)) == [0x60] + (0..<16).map { UInt8($0 * 0x11) })
    }

    @Test func equalValuesShareOneKey() throws {
        let groups: [[RecordValue]] = [
            [.int(0), .uint(0), .double(0), .double(-0.0), .float(0), .float(-0.0), .decimal("0"), .decimal("-0")],
            [.int(3), .uint(3), .double(3), .float(3), .decimal("3"), .decimal("3.000")],
            [.int(-2), .double(-2), .float(-2), .decimal("-2.0")],
            [.int(.max - 1023), .uint(UInt64(Int64.max) - 1023), .double(0x1p63.nextDown)],
            [.uint(1 << 63), .double(0x1p63), .float(0x1p63)],
            [.int(.min), .double(-0x1p63), .float(-0x1p63)],
            [.double(0.5), .float(0.5), .decimal("0.5"), .decimal("5e-1")],
            [.double(.nan), .double(-.nan), .double(.signalingNaN), .float(.nan), .decimal("NaN")],
            [.double(.infinity), .float(.infinity)],
            [.string("\u{E9}"), .string("e\u{301}")],
            [.string("\u{1E0B}\u{323}"), .string("d\u{323}\u{307}"), .string("\u{1E0D}\u{307}")],
            // Foundation's NFC on Linux tells these apart, though Swift's == does not.
            [.string("E\u{F73}\u{323}"), .string("\u{1EB8}\u{F71}\u{F72}"), .string("E\u{F71}\u{F72}\u{323}")],
            [.string("\u{1611E}\u{1611E}"), .string("\u{16121}")],
            [.url("\u{212B}"), .url("A\u{30A}"), .url("\u{C5}")],
        ]
        for group in groups {
            let keys = try group.map { try key($0) }
            #expect(Set(keys).count == 1, "\(group)")
        }
    }

    @Test func valuesWithoutAKeyEncodingThrow() {
        var bytes: [UInt8] = [1, 2]
        #expect(throws: IndexKeyError("arrays and maps cannot be index keys")) {
            try IndexKey.append(.array([.int(1)]), to: &bytes)
        }
        #expect(throws: IndexKeyError("arrays and maps cannot be index keys")) {
            try IndexKey.append(.map([RecordField(name: "a", value: .null)]), to: &bytes)
        }
        #expect(throws: IndexKeyError.self) { try IndexKey.append(.decimal("twelve"), to: &bytes) }
        #expect(bytes == [1, 2])
        #expect(
            IndexKeyError("arrays and maps cannot be index keys").description == "arrays and maps cannot be index keys")
    }

    // MARK: - Order properties

    @Test func numbersOfMixedKindsSortByExactNumericValue() throws {
        var random = Self.generator("numbersOfMixedKindsSortByExactNumericValue")
        var failures: [String] = []
        for _ in 0..<Self.pairCount {
            let first = Self.randomNumber(&random)
            let second = Bool.random(using: &random) ? Self.randomNumber(&random) : Self.neighbor(of: first, &random)
            let expected = Self.compareNumbers(first, second)
            let actual = Self.compareBytes(try key(first), try key(second))
            if expected != actual, failures.count < 10 {
                failures.append("\(first) vs \(second): expected \(expected), keys say \(actual)")
            }
            for value in [first, second] {
                let bytes = try key(value)
                let decoded = try decodeAll(bytes)
                let again = try key(decoded)
                if decoded.count != 1 || Self.compareNumbers(decoded[0], value) != 0 || again != bytes,
                    failures.count < 10
                {
                    failures.append("\(value) decodes to \(decoded)")
                }
            }
        }
        #expect(failures.isEmpty, "\(failures)")
    }

    @Test func stringsSortByTheScalarsOfTheirNFCFormAndAgreeWithSwift() throws {
        var random = Self.generator("stringsSortByTheScalarsOfTheirNFCFormAndAgreeWithSwift")
        var failures: [String] = []
        var prefixCases = 0
        for _ in 0..<Self.pairCount {
            let first = Self.randomString(&random)
            let second = Bool.random(using: &random) ? Self.randomString(&random) : Self.variant(of: first, &random)
            let keyOrder = Self.compareBytes(try key(.string(first)), try key(.string(second)))
            let nfcOrder = Self.compareScalars(Self.nfc(first), Self.nfc(second))
            let swiftOrder = first < second ? -1 : (first == second ? 0 : 1)
            let description = "\(Self.scalars(first)) vs \(Self.scalars(second))"
            if keyOrder != nfcOrder, failures.count < 10 {
                failures.append("\(description): keys \(keyOrder), NFC scalars \(nfcOrder)")
            }
            if (first == second) != (keyOrder == 0), failures.count < 10 {
                failures.append("\(description): Swift == \(first == second), keys \(keyOrder)")
            }
            guard swiftOrder != keyOrder else { continue }
            // Swift's `<` mishandles a string that is a prefix of the other, raw or in NFC (see `IndexKey`); any other
            // disagreement fails.
            let (left, right) = (first.unicodeScalars.map(\.value), second.unicodeScalars.map(\.value))
            let (leftNFC, rightNFC) = (Self.nfc(first), Self.nfc(second))
            if left.starts(with: right) || right.starts(with: left) || leftNFC.starts(with: rightNFC)
                || rightNFC.starts(with: leftNFC)
            {
                prefixCases += 1
            } else if failures.count < 10 {
                failures.append("\(description): Swift \(swiftOrder), keys \(keyOrder)")
            }
        }
        print("[IndexKeyTests] Swift's < departed from NFC scalar order on \(prefixCases) prefix pairs")
        #expect(failures.isEmpty, "\(failures)")
    }

    @Test func stringKeysStayConsistentWhereSwiftLessThanIsNot() throws {
        let prefix = "x\u{F72}"
        let extended = "x\u{F72}\u{F71}"
        let reordered = "x\u{F71}\u{F72}"
        #expect(extended == reordered)
        #expect(reordered < prefix)
        #expect(try key(.string(extended)) == key(.string(reordered)))
        #expect(Self.compareBytes(try key(.string(extended)), try key(.string(prefix))) < 0)
        withKnownIssue("Swift's String < orders a raw prefix first without normalizing what follows it") {
            #expect(!(prefix < extended))
        }
        // U+0958 is U+0915 U+093C in NFC, so U+0915 is a prefix of it and sorts first.
        let letter = "\u{915}"
        let withNukta = "\u{958}"
        #expect(Self.compareBytes(try key(.string(letter)), try key(.string(withNukta))) < 0)
        #expect(letter != withNukta)
        withKnownIssue("Swift's String < finds neither string less when one's NFC is a prefix of the other's") {
            #expect(letter < withNukta || withNukta < letter)
        }
    }

    @Test func datesSortByTheirInterval() throws {
        var random = Self.generator("datesSortByTheirInterval")
        var failures: [String] = []
        for _ in 0..<Self.pairCount {
            let first = Self.randomInterval(&random)
            let second: Double
            switch Int.random(in: 0..<4, using: &random) {
            case 0: second = first.nextUp
            case 1: second = first.nextDown
            case 2: second = -first
            default: second = Self.randomInterval(&random)
            }
            let expected = Self.compareIntervals(first, second)
            let actual = Self.compareBytes(
                try key(.date(Date(timeIntervalSinceReferenceDate: first))),
                try key(.date(Date(timeIntervalSinceReferenceDate: second))))
            if expected != actual, failures.count < 10 {
                failures.append("\(first) vs \(second): expected \(expected), keys say \(actual)")
            }
        }
        #expect(failures.isEmpty, "\(failures)")
    }

    @Test func uuidsSortByBytesAndByUppercaseText() throws {
        var random = Self.generator("uuidsSortByBytesAndByUppercaseText")
        var failures: [String] = []
        for _ in 0..<Self.pairCount {
            let first = Self.randomUUID(&random)
            var second = Self.randomUUID(&random)
            if Bool.random(using: &random) {
                // Share a random-length prefix, so later bytes decide.
                var bytes = Self.bytes(of: first)
                let shared = Int.random(in: 0...16, using: &random)
                let other = Self.bytes(of: second)
                for index in shared..<16 { bytes[index] = other[index] }
                second = Self.uuid(bytes)
            }
            let textOrder =
                first.uuidString < second.uuidString ? -1 : (first.uuidString == second.uuidString ? 0 : 1)
            let byteOrder = Self.compareBytes(Self.bytes(of: first), Self.bytes(of: second))
            let keyOrder = Self.compareBytes(try key(.uuid(first)), try key(.uuid(second)))
            if textOrder != keyOrder || byteOrder != keyOrder, failures.count < 10 {
                failures.append("\(first) vs \(second): text \(textOrder), bytes \(byteOrder), keys \(keyOrder)")
            }
        }
        #expect(failures.isEmpty, "\(failures)")
    }

    @Test func compoundKeysSortLexicographicallyByTuple() throws {
        var random = Self.generator("compoundKeysSortLexicographicallyByTuple")
        var failures: [String] = []
        for _ in 0..<Self.pairCount {
            let first = (0..<Int.random(in: 2...3, using: &random)).map { _ in Self.randomMixed(&random) }
            var second = (0..<Int.random(in: 2...3, using: &random)).map { _ in Self.randomMixed(&random) }
            if Bool.random(using: &random) {
                // Share leading values, so later ones decide.
                let shared = Int.random(in: 0...min(first.count, second.count), using: &random)
                second.replaceSubrange(0..<shared, with: first[0..<shared])
            }
            let expected = Self.compareTuples(first, second)
            let firstKey = try key(first)
            let secondKey = try key(second)
            let actual = Self.compareBytes(firstKey, secondKey)
            if expected != actual, failures.count < 10 {
                failures.append("\(first) vs \(second): expected \(expected), keys say \(actual)")
            }
            let decoded = try decodeAll(firstKey)
            let again = try key(decoded)
            if Self.compareTuples(decoded, first) != 0 || again != firstKey, failures.count < 10 {
                failures.append("\(first) decodes to \(decoded)")
            }
        }
        #expect(failures.isEmpty, "\(failures)")
    }

    @Test func classesSortInTheDocumentedOrder() throws {
        let ascending: [RecordValue] = [
            .null, .bool(false), .bool(true), .double(-.infinity), .int(.min), .double(-1.5), .int(-1),
            .double(-.leastNonzeroMagnitude), .int(0), .double(.leastNonzeroMagnitude), .float(0.5), .uint(1),
            .decimal("1.25"), .uint(.max), .double(.greatestFiniteMagnitude), .double(.infinity), .double(.nan),
            .string(""), .string("\0"), .string("a"), .string("\u{10FFFF}"), .url(""), .url("z"), .data(Data()),
            .data(Data([0xFF])), .date(.distantPast), .date(.distantFuture),
            .uuid(UUID(uuidString: "00000000-0000-0000-0000-000000000000")!),
            .uuid(UUID(uuidString: "FFFFFFFF-FFFF-FFFF-FFFF-FFFFFFFFFFFF")!),
        ]
        let keys = try ascending.map { try key($0) }
        for index in keys.indices.dropFirst() {
            #expect(
                Self.compareBytes(keys[index - 1], keys[index]) < 0, "\(ascending[index - 1]) < \(ascending[index])")
        }
    }

    // MARK: - successor(ofPrefix:)

    @Test func successorHandlesTrailingFFBytes() {
        #expect(IndexKey.successor(ofPrefix: []) == nil)
        #expect(IndexKey.successor(ofPrefix: [0xFF]) == nil)
        #expect(IndexKey.successor(ofPrefix: [0xFF, 0xFF, 0xFF]) == nil)
        #expect(IndexKey.successor(ofPrefix: [0x00]) == [0x01])
        #expect(IndexKey.successor(ofPrefix: [0x01, 0xFE]) == [0x01, 0xFF])
        #expect(IndexKey.successor(ofPrefix: [0x01, 0xFF]) == [0x02])
        #expect(IndexKey.successor(ofPrefix: [0x00, 0xFF, 0xFF]) == [0x01])
        #expect(IndexKey.successor(ofPrefix: [0xFE, 0xFF]) == [0xFF])
        #expect(IndexKey.successor(ofPrefix: [0x30, 0x61, 0x00, 0x01]) == [0x30, 0x61, 0x00, 0x02])
    }

    @Test func successorBoundsExactlyTheKeysWithThePrefix() {
        var random = Self.generator("successorBoundsExactlyTheKeysWithThePrefix")
        // Few distinct byte values, so prefixes, 0xFF runs and near misses are common.
        let alphabet: [UInt8] = [0x00, 0x01, 0x7F, 0xFE, 0xFF, 0xFF]
        func randomBytes(_ count: ClosedRange<Int>) -> [UInt8] {
            (0..<Int.random(in: count, using: &random)).map { _ in alphabet.randomElement(using: &random)! }
        }
        var failures: [String] = []
        for _ in 0..<Self.pairCount {
            let prefix = randomBytes(0...4)
            let candidate = Bool.random(using: &random) ? prefix + randomBytes(0...3) : randomBytes(0...6)
            let hasPrefix = candidate.starts(with: prefix)
            guard let bound = IndexKey.successor(ofPrefix: prefix) else {
                if !prefix.allSatisfy({ $0 == 0xFF }) { failures.append("no successor for \(prefix)") }
                continue
            }
            // Keys in [prefix, bound) are exactly the keys that start with the prefix.
            let inRange = Self.compareBytes(candidate, prefix) >= 0 && Self.compareBytes(candidate, bound) < 0
            if inRange != hasPrefix, failures.count < 10 {
                failures.append("prefix \(prefix), bound \(bound), key \(candidate)")
            }
        }
        #expect(failures.isEmpty, "\(failures)")
    }

    @Test func successorOfAnEncodedValueBoundsItsCompoundKeys() throws {
        let leading = try key(.string("ab"))
        let bound = try #require(IndexKey.successor(ofPrefix: leading))
        let inside: [[RecordValue]] = [
            [.string("ab"), .null], [.string("ab"), .uuid(UUID(uuidString: "FFFFFFFF-FFFF-FFFF-FFFF-FFFFFFFFFFFF")!)],
            [.string("ab"), .string("\u{10FFFF}\u{10FFFF}")], [.string("ab"), .int(.min)],
        ]
        let outside: [[RecordValue]] = [[.string("ab\0")], [.string("abc")], [.string("ac")], [.url("")]]
        for tuple in inside { #expect(Self.compareBytes(try key(tuple), bound) < 0, "\(tuple)") }
        for tuple in outside { #expect(Self.compareBytes(try key(tuple), bound) >= 0, "\(tuple)") }
    }

    // MARK: - Malformed keys

    @Test func everyTruncationThrows() throws {
        for (value, _) in Self.roundTrips {
            let bytes = try key(value)
            for length in 0..<bytes.count {
                let prefix = Array(bytes[..<length])
                var offset = 0
                #expect(throws: IndexKeyError.self, "\(value) cut to \(length) bytes") {
                    try prefix.withUnsafeBytes { _ = try IndexKey.decode($0, offset: &offset) }
                }
                #expect(offset == 0)
            }
        }
    }

    @Test func malformedBytesThrowWithTheirOffset() {
        let cases: [([UInt8], Int)] = [
            ([0xFF], 0),
            ([0x00], 0),
            ([0x30, 0x61, 0x00, 0x02], 3),
            ([0x30, 0x61, 0x00], 3),
            ([0x30, 0xC0, 0x80, 0x00, 0x01], 1),
            ([0x30, 0xED, 0xA0, 0x80, 0x00, 0x01], 1),
            ([0x30, 0x65, 0xCC, 0x81, 0x00, 0x01], 1),
            ([0x38, 0x65, 0xCC, 0x81, 0x00, 0x01], 1),
            ([0x23, 0x04, 0x32, 0x01, 0x00], 4),
            ([0x21, 0xFB, 0xCD, 0xFE, 0xFF], 4),
            ([0x23, 0x08, 0x32, 0x00], 1),
            ([0x23, 0x04, 0x32] + [UInt8](repeating: 0x03, count: 9), 11),
            // 2^-1 × (1 + 2^-63): 64 significant bits, too many for a Double, and not an integer.
            ([0x23, 0x04, 0x31] + [UInt8](repeating: 0x01, count: 8) + [0x02], 0),
            // 2^-1074 × 1.1₂ is below the least subnormal.
            ([0x23, 0x00, 0x00, 0x80], 0),
            ([0x50, 0x7F, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF], 1),
            ([0x50, 0xFF, 0xF8, 0x00, 0x00, 0x00, 0x00, 0x00, 0x01], 1),
            ([0x60] + [UInt8](repeating: 0, count: 15), 16),
        ]
        for (bytes, offset) in cases {
            var position = 0
            #expect(throws: IndexKeyError.self, "\(bytes)") {
                try bytes.withUnsafeBytes { _ = try IndexKey.decode($0, offset: &position) }
            }
            #expect(position == 0)
            let result = bytes.withUnsafeBytes { buffer in
                Result { () throws(IndexKeyError) in try IndexKey.decode(buffer, offset: &position) }
            }
            if case .failure(let error) = result {
                #expect(error.offset == offset, "\(bytes): \(error)")
                #expect(error.description.hasPrefix("malformed index key at byte \(offset): "), "\(error)")
            }
        }
        var outside = 3
        #expect(throws: IndexKeyError.self) {
            try [UInt8]([0x05]).withUnsafeBytes { _ = try IndexKey.decode($0, offset: &outside) }
        }
    }

    @Test func randomAndMutatedBytesThrowOrDecodeCanonically() throws {
        var random = Self.generator("randomAndMutatedBytesThrowOrDecodeCanonically")
        let tags: [UInt8] = [0x05, 0x10, 0x11, 0x20, 0x21, 0x22, 0x23, 0x24, 0x25, 0x30, 0x38, 0x40, 0x50, 0x60]
        var failures: [String] = []
        for round in 0..<Self.pairCount {
            var bytes: [UInt8]
            if round % 2 == 0 {
                bytes = (0..<Int.random(in: 0...24, using: &random)).map { _ in
                    UInt8.random(in: 0...255, using: &random)
                }
                if !bytes.isEmpty, Bool.random(using: &random) { bytes[0] = tags.randomElement(using: &random)! }
            } else {
                bytes = try key((0..<Int.random(in: 1...3, using: &random)).map { _ in Self.randomMixed(&random) })
                let index = Int.random(in: 0..<bytes.count, using: &random)
                switch Int.random(in: 0..<3, using: &random) {
                case 0: bytes[index] = UInt8.random(in: 0...255, using: &random)
                case 1: bytes[index] ^= 1 << UInt8.random(in: 0..<8, using: &random)
                default: bytes.removeSubrange(index...)
                }
            }
            bytes.withUnsafeBytes { buffer in
                var offset = 0
                while offset < buffer.count {
                    let start = offset
                    do throws(IndexKeyError) {
                        let value = try IndexKey.decode(buffer, offset: &offset)
                        var again: [UInt8] = []
                        try IndexKey.append(value, to: &again)
                        if offset <= start || again != Array(buffer[start..<offset]), failures.count < 10 {
                            failures.append("\(bytes) at \(start): \(value) re-encodes as \(again)")
                        }
                    } catch {
                        if offset != start || error.offset == nil, failures.count < 10 {
                            failures.append("\(bytes) at \(start): \(error), offset moved to \(offset)")
                        }
                        break
                    }
                }
            }
        }
        #expect(failures.isEmpty, "\(failures)")
    }
}

// MARK: - Helpers

extension IndexKeyTests {
    /// Random pairs per property test.
    static let pairCount = 100_000

    /// One seed for the run, taken from `RILL_SEED` when set so a failure can be replayed.
    static let seed: UInt64 =
        ProcessInfo.processInfo.environment["RILL_SEED"].flatMap(UInt64.init) ?? UInt64.random(in: 1...UInt64.max)

    /// A generator for one test: the run's seed mixed with the test's name, so tests draw independent streams.
    static func generator(_ test: String) -> SeededGenerator {
        print("[IndexKeyTests.\(test)] seed \(seed) (replay with RILL_SEED=\(seed))")
        var hash: UInt64 = seed
        for byte in test.utf8 { hash = (hash ^ UInt64(byte)) &* 0x100_0000_01B3 }
        return SeededGenerator(seed: hash)
    }

    func key(_ value: RecordValue) throws -> [UInt8] {
        var bytes: [UInt8] = []
        try IndexKey.append(value, to: &bytes)
        return bytes
    }

    func key(_ values: [RecordValue]) throws -> [UInt8] {
        var bytes: [UInt8] = []
        for value in values { try IndexKey.append(value, to: &bytes) }
        return bytes
    }

    func decodeAll(_ bytes: [UInt8]) throws -> [RecordValue] {
        try bytes.withUnsafeBytes { buffer in
            var values: [RecordValue] = []
            var offset = 0
            while offset < buffer.count { values.append(try IndexKey.decode(buffer, offset: &offset)) }
            return values
        }
    }

    /// `memcmp` order with the shorter key first on a tie, as LMDB compares keys.
    static func compareBytes(_ lhs: [UInt8], _ rhs: [UInt8]) -> Int {
        lhs == rhs ? 0 : (lhs.lexicographicallyPrecedes(rhs) ? -1 : 1)
    }

    /// The NFC form, by the standard library's normalizer (the one `String.==` uses).
    static func nfc(_ text: String) -> [UInt32] {
        String(decoding: text._nfcCodeUnits, as: UTF8.self).unicodeScalars.map(\.value)
    }

    static func compareScalars(_ lhs: [UInt32], _ rhs: [UInt32]) -> Int {
        lhs == rhs ? 0 : (lhs.lexicographicallyPrecedes(rhs) ? -1 : 1)
    }

    static func scalars(_ text: String) -> String {
        "\"" + text.unicodeScalars.map { "U+" + String($0.value, radix: 16, uppercase: true) }.joined(separator: " ")
            + "\""
    }

    // MARK: Exact oracle

    /// A number as sign and magnitude, compared exactly without going through a lossy conversion.
    struct ExactNumber {
        var isNaN = false
        var sign = 0
        /// 0 below 2^64, 1 for finite magnitudes from 2^64 up (only Doubles), 2 for infinity.
        var tier = 0
        var large = 0.0
        var whole: UInt64 = 0
        /// The fractional part, in [0, 1); exact, since a Double minus its integral part is representable.
        var fraction = 0.0

        init(_ value: RecordValue) {
            switch value {
            case .int(let number):
                self.init(sign: Int(number.signum()), whole: number.magnitude)
            case .uint(let number):
                self.init(sign: number == 0 ? 0 : 1, whole: number)
            case .float(let number):
                self.init(Double(number))
            case .double(let number):
                self.init(number)
            case .decimal(let text):
                self.init(Double(text)!)
            default:
                preconditionFailure("not a number: \(value)")
            }
        }

        init(sign: Int, whole: UInt64) {
            self.sign = sign
            self.whole = whole
        }

        init(_ number: Double) {
            if number.isNaN {
                isNaN = true
                return
            }
            sign = number == 0 ? 0 : (number < 0 ? -1 : 1)
            let magnitude = number.magnitude
            if magnitude.isInfinite {
                tier = 2
            } else if magnitude >= 0x1p64 {
                tier = 1
                large = magnitude
            } else {
                let integral = magnitude.rounded(.towardZero)
                whole = UInt64(integral)
                fraction = magnitude - integral
            }
        }
    }

    /// Exact numeric order; NaN equals NaN and sorts after everything else.
    static func compareNumbers(_ lhs: RecordValue, _ rhs: RecordValue) -> Int {
        let left = ExactNumber(lhs)
        let right = ExactNumber(rhs)
        if left.isNaN || right.isNaN { return left.isNaN == right.isNaN ? 0 : (left.isNaN ? 1 : -1) }
        if left.sign != right.sign { return left.sign < right.sign ? -1 : 1 }
        let leftMagnitude = (left.tier, left.large, left.whole, left.fraction)
        let rightMagnitude = (right.tier, right.large, right.whole, right.fraction)
        if leftMagnitude == rightMagnitude { return 0 }
        return (leftMagnitude < rightMagnitude ? -1 : 1) * left.sign
    }

    static func compareIntervals(_ lhs: Double, _ rhs: Double) -> Int {
        if lhs.isNaN || rhs.isNaN { return lhs.isNaN == rhs.isNaN ? 0 : (lhs.isNaN ? 1 : -1) }
        return lhs < rhs ? -1 : (lhs == rhs ? 0 : 1)
    }

    /// The order the documentation promises across and within classes.
    static func compareMixed(_ lhs: RecordValue, _ rhs: RecordValue) -> Int {
        let (leftRank, rightRank) = (rank(lhs), rank(rhs))
        if leftRank != rightRank { return leftRank < rightRank ? -1 : 1 }
        switch (lhs, rhs) {
        case (.null, .null): return 0
        case (.bool(let left), .bool(let right)): return left == right ? 0 : (left ? 1 : -1)
        case (.string(let left), .string(let right)), (.url(let left), .url(let right)):
            return left < right ? -1 : (left == right ? 0 : 1)
        case (.data(let left), .data(let right)): return compareBytes(Array(left), Array(right))
        case (.date(let left), .date(let right)):
            return compareIntervals(left.timeIntervalSinceReferenceDate, right.timeIntervalSinceReferenceDate)
        case (.uuid(let left), .uuid(let right)): return compareBytes(bytes(of: left), bytes(of: right))
        default: return compareNumbers(lhs, rhs)
        }
    }

    static func rank(_ value: RecordValue) -> Int {
        switch value {
        case .null: 0
        case .bool: 1
        case .int, .uint, .float, .double, .decimal: 2
        case .string: 3
        case .url: 4
        case .data: 5
        case .date: 6
        case .uuid: 7
        case .array, .map: 8
        }
    }

    static func compareTuples(_ lhs: [RecordValue], _ rhs: [RecordValue]) -> Int {
        for (left, right) in zip(lhs, rhs) {
            let order = compareMixed(left, right)
            if order != 0 { return order }
        }
        return lhs.count == rhs.count ? 0 : (lhs.count < rhs.count ? -1 : 1)
    }

    // MARK: Generators

    static func randomNumber(_ random: inout SeededGenerator) -> RecordValue {
        let small = Int64.random(in: -3...3, using: &random)
        switch Int.random(in: 0..<16, using: &random) {
        case 0: return .int(Int64.random(in: .min ... .max, using: &random))
        case 1: return .int(Int64.random(in: -1000...1000, using: &random))
        case 2: return .int((1 << 53 + small) * (Bool.random(using: &random) ? 1 : -1))
        case 3: return .int(Bool.random(using: &random) ? .max - abs(small) : .min + abs(small))
        case 4: return .uint(UInt64.random(in: .min ... .max, using: &random))
        case 5:
            let base: UInt64 = [.max, 1 << 63, 1 << 53, 1 << 32].randomElement(using: &random)!
            return .uint(base &+ UInt64(bitPattern: small))
        case 6: return .double(Double(bitPattern: UInt64.random(in: .min ... .max, using: &random)))
        case 7:
            let specials: [Double] = [
                0, -0.0, .infinity, -.infinity, .nan, .greatestFiniteMagnitude, .leastNonzeroMagnitude,
                .leastNormalMagnitude, 1, 0.5, 0x1p53, 0x1p63, 0x1p64, 0x1p-1022, 0x1p1023,
            ]
            let special = specials.randomElement(using: &random)!
            return .double(Bool.random(using: &random) ? special : -special)
        case 8:
            let fraction = Double(Int.random(in: 0..<16, using: &random)) / 16
            return .double(Double(Int64.random(in: -1000...1000, using: &random)) + fraction)
        case 9:
            let power = Double(sign: .plus, exponent: Int.random(in: 50...66, using: &random), significand: 1)
            let near = [power, power.nextUp, power.nextDown, power + 1, power - 1].randomElement(using: &random)!
            return .double(Bool.random(using: &random) ? near : -near)
        case 10: return .double(Double(Int64.random(in: .min ... .max, using: &random)))
        case 11: return .float(Float(bitPattern: UInt32.random(in: .min ... .max, using: &random)))
        case 12: return .float(Float(Int.random(in: -100...100, using: &random)) / 8)
        case 13:
            let subnormal = Double(bitPattern: UInt64.random(in: 1..<(1 << 52), using: &random))
            return .double(Bool.random(using: &random) ? subnormal : -subnormal)
        case 14:
            let decimals = ["0", "-0", "1", "1.5", "-2.25", "0.1", "123456789012345678901234567890", "-1e-300", "NaN"]
            if Bool.random(using: &random) { return .decimal(decimals.randomElement(using: &random)!) }
            return .decimal("\(Double.random(in: -1e6...1e6, using: &random))")
        default: return .double(Double.random(in: -1e20...1e20, using: &random))
        }
    }

    /// A number equal or adjacent to `value`, often of another kind.
    static func neighbor(of value: RecordValue, _ random: inout SeededGenerator) -> RecordValue {
        let double: Double
        switch value {
        case .int(let number):
            switch Int.random(in: 0..<6, using: &random) {
            case 0: if let exact = Double(exactly: number) { return .double(exact) }
            case 1: if let exact = UInt64(exactly: number) { return .uint(exact) }
            case 2: return .int(number &+ 1)
            case 3: return .int(number &- 1)
            case 4: return .float(Float(number))
            default: break
            }
            double = Double(number)
        case .uint(let number):
            switch Int.random(in: 0..<5, using: &random) {
            case 0: if let exact = Int64(exactly: number) { return .int(exact) }
            case 1: return .uint(number &+ 1)
            case 2: return .uint(number &- 1)
            case 3: return .float(Float(number))
            default: break
            }
            double = Double(number)
        case .float(let number): double = Double(number)
        case .double(let number): double = number
        case .decimal(let text): double = Double(text)!
        default: preconditionFailure("not a number: \(value)")
        }
        switch Int.random(in: 0..<7, using: &random) {
        case 0: return .double(double.nextUp)
        case 1: return .double(double.nextDown)
        case 2: if let exact = Int64(exactly: double) { return .int(exact) }
        case 3: if let exact = UInt64(exactly: double) { return .uint(exact) }
        case 4: return .float(Float(double))
        case 5: return .double(-double)
        default: break
        }
        if let rounded = Int64(exactly: double.rounded()) { return .int(rounded) }
        return .double(double)
    }

    /// Scalars chosen to exercise normalization: combining marks of different classes, singletons, Hangul,
    /// composition exclusions, recent compositions, and characters beyond the BMP.
    static let scalarPool: [Unicode.Scalar] = [
        "a", "b", "e", "o", "z", "A", "E", "0", " ", "\u{0}", "\u{1}", "\u{7F}",
        "\u{C5}", "\u{E9}", "\u{DF}", "\u{FF}", "\u{1E0B}", "\u{1E0D}", "d",
        "\u{300}", "\u{301}", "\u{307}", "\u{308}", "\u{30A}", "\u{323}", "\u{327}", "\u{345}", "\u{344}",
        "\u{340}", "\u{341}", "\u{343}", "\u{F71}", "\u{F72}", "\u{F73}",
        "\u{212B}", "\u{2126}", "\u{212A}", "\u{3B1}", "\u{391}", "\u{1F71}", "\u{3AC}",
        "\u{1100}", "\u{1161}", "\u{11A8}", "\u{AC00}", "\u{AC01}", "\u{D7A3}",
        "\u{915}", "\u{93C}", "\u{958}", "\u{4E00}", "\u{F900}", "\u{2F800}",
        "\u{1F600}", "\u{1F44D}", "\u{1F3FD}", "\u{200D}", "\u{1D15E}", "\u{1D157}", "\u{1D165}", "\u{1D400}",
        "\u{10000}", "\u{10FFFF}", "\u{E000}", "\u{FFFD}", "\u{FFFF}",
        "\u{11131}", "\u{11127}", "\u{1112E}", "\u{11099}", "\u{110BA}", "\u{1109A}",
        "\u{11382}", "\u{113C9}", "\u{11383}", "\u{113C2}", "\u{113B8}", "\u{113C5}",
        "\u{1611E}", "\u{1611F}", "\u{16121}", "\u{16D63}", "\u{16D67}", "\u{16D69}", "\u{16D6A}",
        "\u{105D2}", "\u{105C9}", "\u{0B47}", "\u{0B3E}", "\u{0B4B}",
    ]

    static func randomString(_ random: inout SeededGenerator) -> String {
        var scalars = String.UnicodeScalarView()
        for _ in 0..<Int.random(in: 0...8, using: &random) {
            scalars.append(scalarPool.randomElement(using: &random)!)
        }
        return String(scalars)
    }

    /// A string sharing a prefix with `text`, or the same text in another normalization form.
    static func variant(of text: String, _ random: inout SeededGenerator) -> String {
        switch Int.random(in: 0..<4, using: &random) {
        case 0: return text.decomposedStringWithCanonicalMapping
        case 1: return text.precomposedStringWithCanonicalMapping
        case 2: return text + randomString(&random)
        default:
            let scalars = Array(text.unicodeScalars)
            var prefix = String.UnicodeScalarView(scalars[..<Int.random(in: 0...scalars.count, using: &random)])
            prefix.append(contentsOf: randomString(&random).unicodeScalars)
            return String(prefix)
        }
    }

    static func randomInterval(_ random: inout SeededGenerator) -> Double {
        switch Int.random(in: 0..<4, using: &random) {
        case 0: return Double(bitPattern: UInt64.random(in: .min ... .max, using: &random))
        case 1:
            return [0, -0.0, .infinity, -.infinity, .nan, -.nan, .leastNonzeroMagnitude].randomElement(using: &random)!
        case 2: return Double(Int.random(in: -5...5, using: &random))
        default: return Double.random(in: -4e9...4e9, using: &random)
        }
    }

    static func randomUUID(_ random: inout SeededGenerator) -> UUID {
        uuid((0..<16).map { _ in UInt8.random(in: 0...255, using: &random) })
    }

    static func bytes(of uuid: UUID) -> [UInt8] {
        withUnsafeBytes(of: uuid.uuid) { Array($0) }
    }

    static func uuid(_ bytes: [UInt8]) -> UUID {
        bytes.withUnsafeBytes { UUID(uuid: $0.loadUnaligned(as: uuid_t.self)) }
    }

    /// Values from small pools, so that tuples often tie on their leading values.
    static func randomMixed(_ random: inout SeededGenerator) -> RecordValue {
        let numbers: [RecordValue] = [
            .int(-1), .double(-1), .int(0), .double(-0.0), .uint(0), .double(0.5), .float(0.5), .decimal("0.5"),
            .int(1), .uint(1), .uint(.max), .double(0x1p64), .double(.nan), .double(.infinity), .int(.min),
        ]
        let strings = ["", "a", "a\0", "a\0b", "ab", "b", "\u{E9}", "e\u{301}", "e", "\u{1F600}"]
        let data: [[UInt8]] = [[], [0], [0, 0], [0, 1], [0, 0xFF], [1], [0xFF], [0xFF, 0]]
        let intervals: [Double] = [-1, 0, -0.0, 1, 1.5, .infinity, .nan]
        let uuids = [
            "00000000-0000-0000-0000-000000000000", "00000000-0000-0000-0000-000000000001",
            "E621E1F8-C36C-495A-93FC-0C247A3E6E5F", "FFFFFFFF-FFFF-FFFF-FFFF-FFFFFFFFFFFF",
        ]
        switch Int.random(in: 0..<9, using: &random) {
        case 0: return .null
        case 1: return .bool(Bool.random(using: &random))
        case 2: return numbers.randomElement(using: &random)!
        case 3: return randomNumber(&random)
        case 4: return .string(strings.randomElement(using: &random)!)
        case 5: return .url(strings.randomElement(using: &random)!)
        case 6: return .data(Data(data.randomElement(using: &random)!))
        case 7: return .date(Date(timeIntervalSinceReferenceDate: intervals.randomElement(using: &random)!))
        default: return .uuid(UUID(uuidString: uuids.randomElement(using: &random)!)!)
        }
    }
}

extension IndexKeyTests {
}
