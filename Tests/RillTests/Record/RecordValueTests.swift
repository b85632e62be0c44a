import Foundation
import RillWorkloads
import Testing

@testable import Rill

extension RecordCoderTests {
    func parse(_ bytes: [UInt8]) throws -> RecordValue {
        try bytes.withUnsafeBytes { try RecordValue(record: $0) }
    }

    /// A value using every case, including ones equality must treat specially (NaN, -0.0).
    static let everyShape = RecordValue.map([
        RecordField(name: "null", value: .null),
        RecordField(name: "bools", value: .array([.bool(true), .bool(false)])),
        RecordField(name: "int", value: .int(-42)),
        RecordField(name: "uint", value: .uint(.max)),
        RecordField(name: "float", value: .float(.nan)),
        RecordField(name: "double", value: .double(-0.0)),
        RecordField(name: "string", value: .string("tab\there 🙂")),
        RecordField(name: "data", value: .data(Data([0, 1, 254, 255]))),
        RecordField(name: "date", value: .date(Date(timeIntervalSinceReferenceDate: 817_654_528.123))),
        RecordField(name: "uuid", value: .uuid(UUID(uuidString: "E621E1F8-C36C-495A-93FC-0C247A3E6E5F")!)),
        RecordField(name: "url", value: .url("https://example.com/a?b=c")),
        RecordField(name: "decimal", value: .decimal("-0.001")),
        RecordField(name: "empty", value: .map([])),
        RecordField(name: "nested", value: .array([.array([]), .map([RecordField(name: "", value: .null)])])),
    ])

    @Test func recordValueParsesEveryEncodedShape() throws {
        let date = Date(timeIntervalSinceReferenceDate: 1.5)
        let uuid = UUID()
        let cases: [([UInt8], RecordValue)] = [
            (try RecordCoder.encode(Int?.none), .null),
            (try RecordCoder.encode(true), .bool(true)),
            (try RecordCoder.encode(Int8(-3)), .int(-3)),
            (try RecordCoder.encode(UInt16(3)), .uint(3)),
            (try RecordCoder.encode(Float(1.5)), .float(1.5)),
            (try RecordCoder.encode(2.5), .double(2.5)),
            (try RecordCoder.encode("s"), .string("s")),
            (try RecordCoder.encode(Data([9])), .data(Data([9]))),
            (try RecordCoder.encode(date), .date(date)),
            (try RecordCoder.encode(uuid), .uuid(uuid)),
            (try RecordCoder.encode(URL(string: "https://a.b/c")!), .url("https://a.b/c")),
            (try RecordCoder.encode(Decimal(string: "3.14")!), .decimal("3.14")),
            (try RecordCoder.encode([1, 2]), .array([.int(1), .int(2)])),
            (try RecordCoder.encode(Color.green), .string("green")),
            (try RecordCoder.encode(Shape.point), .map([RecordField(name: "point", value: .map([]))])),
            (
                try RecordCoder.encode(Shape.label("x", 2)),
                .map([
                    RecordField(
                        name: "label",
                        value: .map([
                            RecordField(name: "_0", value: .string("x")), RecordField(name: "_1", value: .int(2)),
                        ]))
                ])
            ),
            (
                try RecordCoder.encode(Optionals(present: 1, absent: nil, nested: nil)),
                .map([
                    RecordField(name: "present", value: .int(1))
                ])
            ),
            (
                try RecordCoder.encode(Book.sample),
                .map([
                    RecordField(name: "id", value: .uuid(Book.sample.id)),
                    RecordField(name: "title", value: .string(Book.sample.title)),
                    RecordField(name: "author", value: .string(Book.sample.author)),
                    RecordField(name: "pages", value: .int(448)),
                    RecordField(name: "isRead", value: .bool(true)),
                    RecordField(name: "addedAt", value: .date(Book.sample.addedAt)),
                ])
            ),
        ]
        for (bytes, expected) in cases {
            #expect(try parse(bytes) == expected)
            #expect(try parse(bytes).recordBytes() == bytes)
        }
    }

    @Test func recordBytesRoundTripsThroughRecordValue() throws {
        let value = Self.everyShape
        #expect(try parse(value.recordBytes()) == value)
        #expect(value.recordBytes().first == RecordFormat.version)
        // Equality is bit-exact for floating point.
        #expect(RecordValue.double(.nan) == .double(.nan))
        #expect(RecordValue.double(0.0) != .double(-0.0))
        #expect(Set([RecordValue.float(.nan), .float(.nan)]).count == 1)
        // The bytes a parsed value writes back are the bytes it was parsed from.
        for bytes in [
            try RecordCoder.encode(Book.sample),
            try RecordCoder.encode(
                Level1(
                    id: UUID(), child: Level2(title: "t", deeper: Level3(flag: true, values: [1]), optionalDeeper: nil),
                    children: [])),
        ] {
            #expect(try parse(bytes).recordBytes() == bytes)
        }
    }

    @Test func aParseOfSomeFieldsKeepsExactlyThoseOfTheWholeParse() throws {
        let bytes = try RecordCoder.encode(Book.sample)
        guard case .map(let all) = try parse(bytes) else {
            Issue.record("a Book record is not a map")
            return
        }
        let names = all.map(\.name)
        // Every subset of the first fields, and a name the record does not have.
        for count in 0...min(names.count, 4) {
            for wanted in [Set(names.prefix(count)), Set(names.suffix(count)), Set(names.prefix(count) + ["nope"])] {
                let projected = try bytes.withUnsafeBytes { try RecordValue(record: $0, fields: wanted) }
                #expect(projected == .map(all.filter { wanted.contains($0.name) }), "fields \(wanted.sorted())")
            }
        }
        // Structure is still checked in the fields skipped: a truncated record is refused.
        #expect(throws: RecordError.self) {
            try bytes.dropLast().withUnsafeBytes { try RecordValue(record: $0, fields: []) }
        }
        // A record that is not a map is parsed whole.
        let scalar = RecordValue.int(7).recordBytes()
        #expect(try scalar.withUnsafeBytes { try RecordValue(record: $0, fields: ["a"]) } == .int(7))
    }

    /// Fields are picked as `Set<String>.contains` picks names: by canonical equivalence, so a
    /// name spelled with other scalars (the Kelvin sign for `K`, `e` and a combining accent for
    /// `é`) picks the stored field, under the stored spelling; random names of ASCII, accented and
    /// equivalent spellings against that reference.
    @Test func fieldsArePickedAsStringsCompare() throws {
        let stored = RecordValue.map([
            RecordField(name: "K", value: .int(1)), RecordField(name: "\u{E9}", value: .int(2)),
            RecordField(name: "id", value: .int(3)), RecordField(name: "e\u{301}x", value: .int(4)),
        ])
        let bytes = stored.recordBytes()
        func pick(_ wanted: Set<String>) throws -> RecordValue {
            try bytes.withUnsafeBytes { try RecordValue(record: $0, fields: wanted) }
        }
        #expect(try pick(["\u{212A}"]) == .map([RecordField(name: "K", value: .int(1))]))
        #expect(try pick(["e\u{301}"]) == .map([RecordField(name: "\u{E9}", value: .int(2))]))
        #expect(
            try pick(["\u{E9}x", "id"])
                == .map([
                    RecordField(name: "id", value: .int(3)), RecordField(name: "e\u{301}x", value: .int(4)),
                ]))
        #expect(try pick(["k", "\u{E9}\u{301}"]) == .map([]))

        var random = SeededGenerator(label: "fields picked as strings compare")
        let alphabet = [
            "a", "K", "\u{212A}", "\u{E9}", "e\u{301}", "e", "\u{301}", "\u{C5}", "A\u{30A}", "\u{212B}", "z",
        ]
        func name() -> String {
            (0..<Int.random(in: 0...3, using: &random)).map { _ in alphabet.randomElement(using: &random)! }.joined()
        }
        for round in 0..<2_000 {
            let fields = (0..<Int.random(in: 0...6, using: &random)).map { index in
                RecordField(name: name(), value: .int(Int64(index)))
            }
            let record = RecordValue.map(fields).recordBytes()
            let wanted = Set((0..<Int.random(in: 0...4, using: &random)).map { _ in name() })
            let picked = try record.withUnsafeBytes { try RecordValue(record: $0, fields: wanted) }
            #expect(
                picked == .map(fields.filter { wanted.contains($0.name) }),
                "round \(round): \(fields.map(\.name)) picking \(wanted)")
        }
    }

    @Test func recordValueDecodesBackIntoTheSwiftType() throws {
        let bytes = try RecordCoder.encode(Book.sample)
        let rewritten = try parse(bytes).recordBytes()
        #expect(try RecordCoder.decode(Book.self, from: rewritten) == Book.sample)
    }

    // MARK: - JSON

    @Test func jsonRendersARecordCompactly() throws {
        let json = try parse(RecordCoder.encode(Book.sample)).jsonString()
        let expected =
            #"{"id":"E621E1F8-C36C-495A-93FC-0C247A3E6E5F","title":"Twenty Thousand Leagues","#
            + #""author":"Jules Verne","pages":448,"isRead":true,"addedAt":"2026-11-29T14:15:28.123Z"}"#
        #expect(json == expected)
    }

    @Test func jsonRendersEveryCase() throws {
        let expected =
            #"{"null":null,"bools":[true,false],"int":-42,"uint":18446744073709551615,"float":"NaN","#
            + #""double":-0.0,"string":"tab\there 🙂","data":"AAH+/w==","date":"2026-11-29T14:15:28.123Z","#
            + #""uuid":"E621E1F8-C36C-495A-93FC-0C247A3E6E5F","url":"https://example.com/a?b=c","decimal":-0.001,"#
            + #""empty":{},"nested":[[],{"":null}]}"#
        #expect(Self.everyShape.jsonString() == expected)
    }

    @Test func jsonEscapesQuotesBackslashesAndControlCharacters() {
        let value = RecordValue.map([
            RecordField(name: "quote\"key", value: .string("say \"hi\"")),
            RecordField(name: "back\\slash", value: .string("C:\\dir\\file")),
            RecordField(name: "controls", value: .string("\u{0}\u{1}\u{8}\u{9}\u{A}\u{C}\u{D}\u{1F}\u{7F}")),
            RecordField(name: "unicode", value: .string("é€𝄞 e\u{301} /slash")),
        ])
        let expected =
            #"{"quote\"key":"say \"hi\"","back\\slash":"C:\\dir\\file","#
            + #""controls":"\u0000\u0001\b\t\n\f\r\u001f"# + "\u{7F}" + #"","#
            + #""unicode":"é€𝄞 e"# + "\u{301}" + #" /slash"}"#
        #expect(value.jsonString() == expected)
        // The output is valid JSON that Foundation reads back to the same strings.
        let object = try? JSONSerialization.jsonObject(with: Data(value.jsonString().utf8)) as? [String: String]
        #expect(object?["controls"] == "\u{0}\u{1}\u{8}\u{9}\u{A}\u{C}\u{D}\u{1F}\u{7F}")
        #expect(object?["quote\"key"] == "say \"hi\"")
    }

    @Test func jsonRendersNumbersAndNonFiniteValues() {
        let value = RecordValue.array([
            .double(.infinity), .double(-.infinity), .double(.nan), .float(.infinity), .float(-.infinity),
            .double(0.1), .double(1), .double(1e-7), .double(1.5e300), .float(3.14), .int(.min), .uint(0),
            .decimal("12345678901234567890.123"), .decimal("NaN"),
        ])
        let expected =
            #"["Infinity","-Infinity","NaN","Infinity","-Infinity",0.1,1.0,1e-07,1.5e+300,3.14,"#
            + #"-9223372036854775808,0,12345678901234567890.123,"NaN"]"#
        #expect(value.jsonString() == expected)
    }

    @Test func jsonRendersDatesAsUTCISO8601WithTheDigitsTheyNeed() {
        // Seconds since 2001, as a Date stores them: at least milliseconds, and every digit the stored Double needs.
        let cases: [(Double, String)] = [
            (-978_307_200, "1970-01-01T00:00:00.000Z"),
            (0, "2001-01-01T00:00:00.000Z"),
            (-0.0, "2001-01-01T00:00:00.000Z"),
            (-1.25, "2000-12-31T23:59:58.750Z"),
            (-26_524_800, "2000-02-29T00:00:00.000Z"),
            (817_654_528.123, "2026-11-29T14:15:28.123Z"),
            (817_654_528.9996, "2026-11-29T14:15:28.9996Z"),
            (0.123456, "2001-01-01T00:00:00.123456Z"),
            (1e-7, "2001-01-01T00:00:00.0000001Z"),
            (-1e-7, "2000-12-31T23:59:59.9999999Z"),
            (Double.leastNonzeroMagnitude, "2001-01-01T00:00:00." + String(repeating: "0", count: 323) + "5Z"),
            (Date.distantFuture.timeIntervalSinceReferenceDate, "4001-01-01T00:00:00.000Z"),
            (Date.distantPast.timeIntervalSinceReferenceDate, "0000-12-30T00:00:00.000Z"),
            (-63_177_062_400, "-0001-01-01T00:00:00.000Z"),
            (252_423_993_600, "+10000-01-01T00:00:00.000Z"),
        ]
        for (seconds, text) in cases {
            #expect(RecordValue.date(Date(timeIntervalSinceReferenceDate: seconds)).jsonString() == "\"\(text)\"")
        }
        // Far dates are counted exactly too (the year is about 1e300 s / 31,556,952 s a year).
        let far = RecordValue.date(Date(timeIntervalSinceReferenceDate: 1e300)).jsonString()
        #expect(far.hasPrefix("\"+31688738506811") && far.hasSuffix(".000Z\""), "\(far)")
        #expect(RecordValue.date(Date(timeIntervalSinceReferenceDate: .nan)).jsonString() == #""NaN""#)
        #expect(RecordValue.date(Date(timeIntervalSinceReferenceDate: -.infinity)).jsonString() == #""-Infinity""#)
    }

    @Test func prettyJSONIndentsByTwoSpaces() {
        let value = RecordValue.map([
            RecordField(name: "a", value: .int(1)),
            RecordField(name: "list", value: .array([.bool(true), .map([]), .array([.null])])),
            RecordField(name: "empty", value: .array([])),
        ])
        let expected = """
            {
              "a": 1,
              "list": [
                true,
                {},
                [
                  null
                ]
              ],
              "empty": []
            }
            """
        #expect(value.jsonString(pretty: true) == expected)
        #expect(RecordValue.int(5).jsonString(pretty: true) == "5")
    }

    // MARK: - Top-level fields

    @Test func topLevelFieldRangesHoldEachFieldsEncodedValue() throws {
        let bytes = try RecordCoder.encode(Book.sample)
        let fields = try bytes.withUnsafeBytes { try RecordCoder.topLevelFields($0) }
        #expect(fields.map(\.name) == ["id", "title", "author", "pages", "isRead", "addedAt"])
        guard case .map(let parsed) = try parse(bytes) else {
            Issue.record("expected a map")
            return
        }
        for (field, expected) in zip(fields, parsed) {
            let valueBytes = [RecordFormat.version] + bytes[field.value]
            #expect(try parse(valueBytes) == expected.value)
        }
        let pages = fields[3].value
        #expect(try RecordCoder.decode(Int.self, from: [RecordFormat.version] + bytes[pages]) == 448)
    }

    @Test func topLevelFieldsRevealWhichFieldsChanged() throws {
        var changed = Book.sample
        changed.pages += 1
        changed.isRead = false
        let old = try RecordCoder.encode(Book.sample)
        let new = try RecordCoder.encode(changed)
        let oldFields = try old.withUnsafeBytes { try RecordCoder.topLevelFields($0) }
        let newFields = try new.withUnsafeBytes { try RecordCoder.topLevelFields($0) }
        let differing = zip(oldFields, newFields).filter { old[$0.value] != new[$1.value] }.map(\.0.name)
        #expect(differing == ["pages", "isRead"])
    }

    @Test func topLevelFieldsRejectsRecordsThatAreNotMaps() throws {
        for bytes in [try RecordCoder.encode([1, 2]), try RecordCoder.encode(5), [UInt8]([0x01, 0x0D, 0x0F, 0x00])] {
            #expect(throws: RecordError.self) { try bytes.withUnsafeBytes { try RecordCoder.topLevelFields($0) } }
        }
        #expect(try [UInt8]([0x01, 0x0D, 0x0F]).withUnsafeBytes { try RecordCoder.topLevelFields($0) }.isEmpty)
    }
}
