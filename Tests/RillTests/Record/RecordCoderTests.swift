import Foundation
import RillTestSupport
import RillWorkloads
import Testing

@testable import Rill

@Suite struct RecordCoderTests {
    /// Round-trips `value` at the top level (single-value path), as a struct field (keyed path) and as array elements
    /// (unkeyed path), comparing with `==`.
    func expectRoundTrip<T: Codable & Equatable>(
        _ value: T, sourceLocation: SourceLocation = #_sourceLocation
    ) throws {
        let top = try RecordCoder.decode(T.self, from: RecordCoder.encode(value))
        #expect(top == value, "top level", sourceLocation: sourceLocation)
        let keyed = try RecordCoder.decode(Keyed<T>.self, from: RecordCoder.encode(Keyed(value: value)))
        #expect(keyed.value == value, "as a field", sourceLocation: sourceLocation)
        let array = try RecordCoder.decode([T].self, from: RecordCoder.encode([value, value]))
        #expect(array == [value, value], "as array elements", sourceLocation: sourceLocation)
    }

    /// Round-trips a floating-point value on all three paths, comparing bit patterns so NaN and -0.0 count.
    func expectBitExactRoundTrip<F: BinaryFloatingPoint & Codable>(
        _ value: F, sourceLocation: SourceLocation = #_sourceLocation
    ) throws where F.RawSignificand: FixedWidthInteger {
        let bits = { (float: F) in "\(float.sign) \(float.exponentBitPattern) \(float.significandBitPattern)" }
        let top = try RecordCoder.decode(F.self, from: RecordCoder.encode(value))
        #expect(bits(top) == bits(value), sourceLocation: sourceLocation)
        let keyed = try RecordCoder.decode(Keyed<F>.self, from: RecordCoder.encode(Keyed(value: value)))
        #expect(bits(keyed.value) == bits(value), sourceLocation: sourceLocation)
        let array = try RecordCoder.decode([F].self, from: RecordCoder.encode([value]))
        #expect(array.map(bits) == [bits(value)], sourceLocation: sourceLocation)
    }

    // MARK: - Scalars

    @Test func integersRoundTripAtTheirLimits() throws {
        for value in [Int.min, -1, 0, 1, Int.max] { try expectRoundTrip(value) }
        for value in [Int8.min, -1, 0, Int8.max] { try expectRoundTrip(value) }
        for value in [Int16.min, 0, Int16.max] { try expectRoundTrip(value) }
        for value in [Int32.min, 0, Int32.max] { try expectRoundTrip(value) }
        for value in [Int64.min, -64, 63, 64, Int64.max] { try expectRoundTrip(value) }
        for value in [UInt.min, 127, 128, UInt.max] { try expectRoundTrip(value) }
        for value in [UInt8.min, UInt8.max] { try expectRoundTrip(value) }
        for value in [UInt16.min, UInt16.max] { try expectRoundTrip(value) }
        for value in [UInt32.min, UInt32.max] { try expectRoundTrip(value) }
        for value in [UInt64.min, UInt64.max] { try expectRoundTrip(value) }
    }

    @Test func integersUseTheShortestVarint() throws {
        #expect(try RecordCoder.encode(0) == [0x01, 0x03, 0x00])
        #expect(try RecordCoder.encode(-1) == [0x01, 0x03, 0x01])
        #expect(try RecordCoder.encode(64) == [0x01, 0x03, 0x80, 0x01])
        #expect(try RecordCoder.encode(UInt8(200)) == [0x01, 0x04, 0xC8, 0x01])
        #expect(try RecordCoder.encode(Int64.min).count == 12)
        #expect(try RecordCoder.encode(UInt64.max).count == 12)
    }

    @Test func doublesRoundTripBitExactly() throws {
        let values: [Double] = [
            0, -0.0, 1, -1.5, .pi, .infinity, -.infinity, .nan, -.nan, .signalingNaN,
            Double(nan: 0x1234, signaling: false), .leastNonzeroMagnitude, .leastNormalMagnitude,
            -.leastNonzeroMagnitude, .greatestFiniteMagnitude, .leastNormalMagnitude / 3,
        ]
        for value in values { try expectBitExactRoundTrip(value) }
    }

    @Test func floatsRoundTripBitExactly() throws {
        let values: [Float] = [
            0, -0.0, 3.14, .infinity, -.infinity, .nan, Float(nan: 0x55, signaling: false),
            .leastNonzeroMagnitude, .greatestFiniteMagnitude,
        ]
        for value in values { try expectBitExactRoundTrip(value) }
    }

    @Test func boolsRoundTrip() throws {
        try expectRoundTrip(true)
        try expectRoundTrip(false)
        #expect(try RecordCoder.encode(true) == [0x01, 0x02])
    }

    @Test func stringsRoundTripIncludingEmojiAccentsAndNul() throws {
        let values = [
            "", "a", "hello, world", "👩‍👩‍👧‍👦🇯🇵", "e\u{301}", "\u{301}alone", "a\u{0}b\u{0}", "Ω≈ç√∫", "日本語テキスト",
            String(repeating: "long ", count: 10_000), "\"quoted\" \\ back\nslash",
        ]
        for value in values { try expectRoundTrip(value) }
        // Precomposed and decomposed accents are different bytes and must stay different.
        let decomposed = try RecordCoder.decode(String.self, from: RecordCoder.encode("e\u{301}"))
        #expect(Array(decomposed.utf8) == Array("e\u{301}".utf8))
    }

    @Test func datesRoundTripExactly() throws {
        let values = [
            Date.distantPast, Date.distantFuture, Date(timeIntervalSinceReferenceDate: 0),
            Date(timeIntervalSinceReferenceDate: 1234.567_891_234), Date(timeIntervalSince1970: -1.25),
            Date(timeIntervalSinceReferenceDate: 0.1), Date(),
        ]
        for value in values {
            try expectRoundTrip(value)
            let decoded = try RecordCoder.decode(Date.self, from: RecordCoder.encode(value))
            let bits = value.timeIntervalSinceReferenceDate.bitPattern
            #expect(decoded.timeIntervalSinceReferenceDate.bitPattern == bits)
        }
    }

    @Test func uuidsRoundTrip() throws {
        try expectRoundTrip(UUID())
        try expectRoundTrip(UUID(uuidString: "00000000-0000-0000-0000-000000000000")!)
        let uuid = UUID(uuidString: "E621E1F8-C36C-495A-93FC-0C247A3E6E5F")!
        let bytes = try RecordCoder.encode(uuid)
        #expect(bytes.count == 18)
        #expect(Array(bytes[2...]) == withUnsafeBytes(of: uuid.uuid) { Array($0) })
    }

    @Test func dataRoundTripsEmptyAndOneMegabyte() throws {
        try expectRoundTrip(Data())
        var generator = SeededGenerator(seed: 7)
        let large = Data((0..<1_048_576).map { _ in UInt8.random(in: .min ... .max, using: &generator) })
        try expectRoundTrip(large)
        #expect(try RecordCoder.encode(large).count == 1 + 1 + 3 + 1_048_576)
    }

    @Test func urlsRoundTrip() throws {
        let values = [
            URL(string: "https://example.com/path/to%20file?query=1&b=%C3%A9#frag")!,
            URL(fileURLWithPath: "/tmp/some file.txt"),
            URL(string: "mailto:someone@example.com")!,
        ]
        for value in values { try expectRoundTrip(value) }
    }

    @Test func decimalsRoundTripWithoutLosingDigits() throws {
        for text in ["3.14", "-0.001", "12345678901234567890.123", "0", "1e-20", "-99999999999999999999"] {
            try expectRoundTrip(Decimal(string: text)!)
        }
        #expect(try RecordCoder.decode(Decimal.self, from: RecordCoder.encode(Decimal.nan)).isNaN)
        let bytes = try RecordCoder.encode(Decimal(string: "12345678901234567890.123")!)
        #expect(try bytes.withUnsafeBytes { try RecordValue(record: $0) } == .decimal("12345678901234567890.123"))
    }

    @Test func int128RoundTripsWhenItFitsIn64Bits() throws {
        try expectRoundTrip(Int128(Int64.min))
        try expectRoundTrip(Int128(Int64.max))
        try expectRoundTrip(UInt128(UInt64.max))
        #expect(try RecordCoder.encode(Int128(-5)) == RecordCoder.encode(Int64(-5)))
        #expect(throws: RecordError.self) { try RecordCoder.encode(Int128(Int64.max) + 1) }
        #expect(throws: RecordError.self) { try RecordCoder.encode(Keyed(value: UInt128(UInt64.max) + 1)) }
        do {
            _ = try RecordCoder.encode(Keyed(value: Int128.min))
            Issue.record("expected an error")
        } catch let error as RecordError {
            #expect(error.code == .unrepresentableValue)
            #expect(error.codingPath == "value")
        }
    }

    // MARK: - Optionals and collections

    @Test func optionalsRoundTrip() throws {
        try expectRoundTrip(Int?.none)
        try expectRoundTrip(Int?.some(5))
        try expectRoundTrip(Optionals(present: 3, absent: nil, nested: nil))
        try expectRoundTrip(Optionals(present: nil, absent: "x", nested: Address(street: "s", city: "c", zip: "z")))
    }

    @Test func doubleOptionalsKeepAllThreeStates() throws {
        for value: Int?? in [.none, .some(.none), .some(.some(3))] {
            let bytes = try RecordCoder.encode(DoubleOptional(value: value))
            let decoded = try RecordCoder.decode(DoubleOptional.self, from: bytes)
            #expect(decoded.value == value)
            let fields = try bytes.withUnsafeBytes { try RecordCoder.topLevelFields($0) }
            #expect(fields.map(\.name) == (value == nil ? [] : ["value"]))
        }
    }

    @Test func arraysOfOptionalsRoundTrip() throws {
        try expectRoundTrip([1, nil, 3, nil] as [Int?])
        try expectRoundTrip([nil, nil] as [String?])
        try expectRoundTrip([Int?]())
    }

    @Test func arraysRoundTripEmptyAndNested() throws {
        try expectRoundTrip([Int]())
        try expectRoundTrip([[Int]]())
        try expectRoundTrip([[1, 2], [], [3]])
        try expectRoundTrip([[["a"]], [[], ["b", "c"]]])
        try expectRoundTrip([UInt8](repeating: 7, count: 300))
        try expectRoundTrip([Date(timeIntervalSinceReferenceDate: 5), .distantFuture])
    }

    @Test func nestedStructsRoundTripThreeLevelsDeep() throws {
        let leaf = Level3(flag: true, values: [1.5, -2])
        let value = Level1(
            id: UUID(),
            child: Level2(title: "one", deeper: leaf, optionalDeeper: nil),
            children: [
                Level2(title: "two", deeper: leaf, optionalDeeper: Level3(flag: false, values: [])),
                Level2(title: "", deeper: Level3(flag: false, values: [.infinity]), optionalDeeper: leaf),
            ])
        try expectRoundTrip(value)
    }

    @Test func stringKeyedDictionariesRoundTrip() throws {
        try expectRoundTrip([String: Int]())
        try expectRoundTrip(["one": 1, "two": 2, "": 0, "ünïcødé": -4])
        try expectRoundTrip(["nested": ["a": [1, 2]], "empty": [:]])
    }

    @Test func intKeyedDictionariesRoundTrip() throws {
        try expectRoundTrip([Int: String]())
        try expectRoundTrip([1: "one", -2: "minus two", Int.max: "max"])
    }

    @Test func setsRoundTrip() throws {
        try expectRoundTrip(Set<String>())
        try expectRoundTrip(Set(["a", "b", "c", "🙂"]))
    }

    @Test func keysLongerThan14BytesRoundTrip() throws {
        try expectRoundTrip(LongKeys(createdBy: "u1", fifteen: 15, long: true))
        let bytes = try RecordCoder.encode(LongKeys(createdBy: "u1", fifteen: 15, long: true))
        let names = try bytes.withUnsafeBytes { try RecordCoder.topLevelFields($0) }.map(\.name)
        #expect(names.map(\.utf8.count) == [15, 15, 130])
    }

    // MARK: - Enums

    @Test func rawValueEnumsRoundTrip() throws {
        try expectRoundTrip(Color.red)
        try expectRoundTrip(Color.blue)
        try expectRoundTrip(Priority.urgent)
        try expectRoundTrip([Priority.low, .high])
        #expect(try RecordCoder.encode(Color.blue) == RecordCoder.encode("BLUE"))
    }

    @Test func enumsWithAssociatedValuesRoundTrip() throws {
        let values: [Shape] = [
            .point, .circle(radius: 2.5), .rectangle(width: 1, height: 2), .label("x", 7),
            .nested(Address(street: "s", city: "c", zip: "z")),
        ]
        for value in values { try expectRoundTrip(value) }
        try expectRoundTrip(values)
    }

    // MARK: - Custom encode(to:)

    @Test func interleavedNestedContainersAreAssembledInOrder() throws {
        let value = Interleaved(first: 1, inner: ["a": 10, "b": 20, "c": 30], list: ["x", "y", "z"], last: "end")
        try expectRoundTrip(value)
        let bytes = try RecordCoder.encode(value)
        let parsed = try bytes.withUnsafeBytes { try RecordValue(record: $0) }
        let expected = RecordValue.map([
            RecordField(
                name: "inner",
                value: .map([
                    RecordField(name: "a", value: .int(10)), RecordField(name: "b", value: .int(20)),
                    RecordField(name: "c", value: .int(30)),
                ])),
            RecordField(name: "list", value: .array([.string("x"), .string("y"), .string("z")])),
            RecordField(name: "first", value: .int(1)),
            RecordField(name: "last", value: .string("end")),
        ])
        #expect(parsed == expected)
    }

    @Test func superEncodersFilledLateRoundTrip() throws {
        let value = Derived(
            base: Base(identifier: 1, createdAt: Date(timeIntervalSinceReferenceDate: 10)),
            other: Base(identifier: 2, createdAt: .distantPast),
            listed: Base(identifier: 3, createdAt: .distantFuture), name: "derived")
        try expectRoundTrip(value)
        let parsed = try RecordCoder.encode(value).withUnsafeBytes { try RecordValue(record: $0) }
        guard case .map(let fields) = parsed else {
            Issue.record("expected a map")
            return
        }
        #expect(fields.map(\.name) == ["super", "other", "items", "name"])
    }

    @Test func specialTypesGetTheirOwnTagsOnEveryPath() throws {
        let value = SpecialEverywhere(
            date: Date(timeIntervalSinceReferenceDate: 42), uuid: UUID(), data: Data([1, 2, 3]),
            url: URL(string: "https://example.com")!, decimal: Decimal(string: "1.5")!)
        try expectRoundTrip(value)
        let parsed = try RecordCoder.encode(value).withUnsafeBytes { try RecordValue(record: $0) }
        #expect(
            parsed
                == .map([
                    RecordField(name: "keyed", value: .map([RecordField(name: "value", value: .date(value.date))])),
                    RecordField(
                        name: "unkeyed",
                        value: .array([
                            .uuid(value.uuid), .data(value.data), .url("https://example.com"),
                        ])),
                    RecordField(name: "single", value: .decimal("1.5")),
                ]))
        #expect(try RecordCoder.encode(value.date).withUnsafeBytes { try RecordValue(record: $0) } == .date(value.date))
    }

    @Test func codingPathsSeenByUserCodeMatchTheValuePosition() throws {
        _ = PathProbe.seenEncoding.drain()
        _ = PathProbe.seenDecoding.drain()
        let value = ProbeHolder(probe: PathProbe(), list: [PathProbe(), PathProbe()], map: ["k": PathProbe()])
        let bytes = try RecordCoder.encode(value)
        _ = try RecordCoder.decode(ProbeHolder.self, from: bytes)
        let expected = ["probe", "list[0]", "list[1]", "map.k"]
        #expect(PathProbe.seenEncoding.drain() == expected)
        #expect(PathProbe.seenDecoding.drain() == expected)
    }

    // MARK: - Buffers

    @Test func encodeIntoAppendsTheSameBytesAsEncode() throws {
        var buffer: [UInt8] = [0xAA, 0xBB]
        try RecordCoder.encode(Book.sample, into: &buffer)
        #expect(buffer == [0xAA, 0xBB] + (try RecordCoder.encode(Book.sample)))
        let interleaved = Interleaved(first: 1, inner: [:], list: ["q"], last: "l")
        try RecordCoder.encode(interleaved, into: &buffer)
        let expected = [0xAA, 0xBB] + (try RecordCoder.encode(Book.sample)) + (try RecordCoder.encode(interleaved))
        #expect(buffer == expected)
        let before = buffer
        #expect(throws: RecordError.self) { try RecordCoder.encode(FailingPerson(), into: &buffer) }
        #expect(buffer == before)
    }

    @Test func decodeFromUnsafeBytesMatchesDecodeFromArray() throws {
        let bytes = try RecordCoder.encode(Book.sample)
        let fromPointer = try bytes.withUnsafeBytes { try RecordCoder.decode(Book.self, from: $0) }
        #expect(fromPointer == Book.sample)
        // A record inside a larger buffer decodes from a slice of it.
        let padded = [0xFF] + bytes + [0xFF]
        let fromSlice = try padded.withUnsafeBytes {
            try RecordCoder.decode(Book.self, from: UnsafeRawBufferPointer(rebasing: $0[1..<(1 + bytes.count)]))
        }
        #expect(fromSlice == Book.sample)
    }
}
