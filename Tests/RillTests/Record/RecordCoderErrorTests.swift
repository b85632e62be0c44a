import Foundation
import RillTestSupport
import RillWorkloads
import Testing

@testable import Rill

extension RecordCoderTests {
    /// Runs `body`, expecting a `DecodingError`, and returns it.
    func decodingError(
        sourceLocation: SourceLocation = #_sourceLocation, _ body: () throws -> Void
    ) -> DecodingError? {
        do {
            try body()
            Issue.record("expected a DecodingError", sourceLocation: sourceLocation)
        } catch let error as DecodingError {
            return error
        } catch {
            Issue.record("expected a DecodingError, got \(error)", sourceLocation: sourceLocation)
        }
        return nil
    }

    /// Runs `body`, expecting a `RecordError`, and returns it.
    func recordError(sourceLocation: SourceLocation = #_sourceLocation, _ body: () throws -> Void) -> RecordError? {
        do {
            try body()
            Issue.record("expected a RecordError", sourceLocation: sourceLocation)
        } catch let error as RecordError {
            return error
        } catch {
            Issue.record("expected a RecordError, got \(error)", sourceLocation: sourceLocation)
        }
        return nil
    }

    // MARK: - Type problems surface as DecodingError

    @Test func stringDecodedAsIntIsATypeMismatchWithItsPath() throws {
        struct NameAsInt: Decodable {
            struct Address: Decodable { var city: Int }
            var address: Address
        }
        let bytes = try RecordCoder.encode(
            Person(
                name: "Ann", age: 3, address: Address(street: "s", city: "Paris", zip: "z"), tags: []))
        let error = decodingError { _ = try RecordCoder.decode(NameAsInt.self, from: bytes) }
        guard case .typeMismatch(let type, let context) = error else {
            Issue.record("expected typeMismatch, got \(String(describing: error))")
            return
        }
        #expect(ObjectIdentifier(type) == ObjectIdentifier(Int.self))
        #expect(context.codingPath.map(\.stringValue) == ["address", "city"])
    }

    @Test func typeMismatchInsideAnArrayNamesTheIndex() throws {
        let bytes = try RecordCoder.encode(Keyed(value: ["a", "b", "c"]))
        let mismatch = decodingError { _ = try RecordCoder.decode(Keyed<[Int]>.self, from: bytes) }
        guard case .typeMismatch(_, let context) = mismatch else {
            Issue.record("expected typeMismatch")
            return
        }
        #expect(RecordError.path(context.codingPath) == "value[0]")
    }

    @Test func missingKeyIsKeyNotFound() throws {
        let bytes = try RecordCoder.encode(Address(street: "s", city: "c", zip: "z"))
        struct NeedsCountry: Decodable { var street: String; var country: String }
        let error = decodingError { _ = try RecordCoder.decode(NeedsCountry.self, from: bytes) }
        guard case .keyNotFound(let key, let context) = error else {
            Issue.record("expected keyNotFound")
            return
        }
        #expect(key.stringValue == "country")
        #expect(context.codingPath.isEmpty)
    }

    @Test func nullForANonOptionalIsValueNotFound() throws {
        let bytes = try RecordCoder.encode(Keyed<Int?>(value: nil))
        let error = decodingError { _ = try RecordCoder.decode(Keyed<Int>.self, from: bytes) }
        guard case .valueNotFound(_, let context) = error else {
            Issue.record("expected valueNotFound")
            return
        }
        #expect(context.codingPath.map(\.stringValue) == ["value"])
        let nested = decodingError { _ = try RecordCoder.decode(Keyed<Address>.self, from: bytes) }
        guard case .valueNotFound = nested else {
            Issue.record("expected valueNotFound for a struct")
            return
        }
    }

    @Test func structDecodedFromAScalarIsATypeMismatch() throws {
        let bytes = try RecordCoder.encode(5)
        let error = decodingError { _ = try RecordCoder.decode(Address.self, from: bytes) }
        guard case .typeMismatch = error else {
            Issue.record("expected typeMismatch")
            return
        }
        let array = decodingError { _ = try RecordCoder.decode([Int].self, from: bytes) }
        guard case .typeMismatch = array else {
            Issue.record("expected typeMismatch")
            return
        }
    }

    @Test func integersThatDoNotFitTheTargetTypeThrowInsteadOfTrapping() throws {
        let stored = try RecordCoder.encode(Keyed(value: 300))
        let error = decodingError { _ = try RecordCoder.decode(Keyed<UInt8>.self, from: stored) }
        guard case .dataCorrupted(let context) = error else {
            Issue.record("expected dataCorrupted")
            return
        }
        #expect(context.codingPath.map(\.stringValue) == ["value"])
        _ = decodingError { _ = try RecordCoder.decode(UInt.self, from: RecordCoder.encode(-1)) }
        _ = decodingError { _ = try RecordCoder.decode(Int8.self, from: RecordCoder.encode(UInt64.max)) }
        _ = decodingError { _ = try RecordCoder.decode(Int64.self, from: RecordCoder.encode(UInt64.max)) }
        _ = decodingError { _ = try RecordCoder.decode([Int16].self, from: RecordCoder.encode([1, 70_000])) }
        _ = decodingError { _ = try RecordCoder.decode(Float.self, from: RecordCoder.encode(1e300)) }
    }

    @Test func signedAndUnsignedInterchangeWhenTheValueFits() throws {
        #expect(try RecordCoder.decode(UInt8.self, from: RecordCoder.encode(200)) == 200)
        #expect(try RecordCoder.decode(Int.self, from: RecordCoder.encode(UInt64(12))) == 12)
        #expect(try RecordCoder.decode(Int8.self, from: RecordCoder.encode(Int64(-128))) == -128)
        #expect(try RecordCoder.decode(Double.self, from: RecordCoder.encode(3)) == 3)
        #expect(try RecordCoder.decode(Double.self, from: RecordCoder.encode(Float(0.5))) == 0.5)
    }

    @Test func unknownEnumCaseIsADecodingError() throws {
        let bytes = try RecordCoder.encode("purple")
        _ = decodingError { _ = try RecordCoder.decode(Color.self, from: bytes) }
    }

    // MARK: - Encoding errors name the failing path

    @Test func encodeErrorsNameTheFieldPath() throws {
        let error = recordError { _ = try RecordCoder.encode(FailingPerson()) }
        #expect(error?.code == .encodingFailed)
        #expect(error?.codingPath == "address.zip")
        #expect(error?.description.hasPrefix("cannot encode `address.zip`: ") == true)
        #expect(error?.underlyingError is Unencodable.Refusal)
        let listError = recordError { _ = try RecordCoder.encode(FailingList()) }
        #expect(listError?.codingPath == "tags[2]")
        #expect(listError?.description.contains("`tags[2]`") == true)
        let topLevel = recordError { _ = try RecordCoder.encode(Unencodable()) }
        #expect(topLevel?.description.hasPrefix("cannot encode value: ") == true)
    }

    @Test func usingTwoKindsOfContainerForOneValueThrows() throws {
        struct Confused: Encodable {
            func encode(to encoder: any Encoder) throws {
                var keyed = encoder.container(keyedBy: RecordCodingKey.self)
                try keyed.encode(1, forKey: RecordCodingKey(stringValue: "a"))
                var unkeyed = encoder.unkeyedContainer()
                try unkeyed.encode(2)
            }
        }
        let error = recordError { _ = try RecordCoder.encode(EncodeOnly(value: Confused())) }
        #expect(error?.code == .invalidContainerUse)
        #expect(error?.codingPath == "value")

        struct TwoValues: Encodable {
            func encode(to encoder: any Encoder) throws {
                var container = encoder.singleValueContainer()
                try container.encode(1)
                try container.encode(2)
            }
        }
        #expect(recordError { _ = try RecordCoder.encode(TwoValues()) }?.code == .invalidContainerUse)
    }

    @Test func aValueThatOpensNoContainerEncodesAsAnEmptyMap() throws {
        struct Silent: Codable, Equatable {
            func encode(to encoder: any Encoder) throws {}
            init() {}
            init(from decoder: any Decoder) throws {}
        }
        #expect(try RecordCoder.encode(Silent()) == [0x01, 0x0D, 0x0F])
        try expectRoundTrip(Silent())
    }

    // MARK: - Malformed bytes surface as RecordError

    @Test func malformedBytesThrowRecordErrorWithACode() throws {
        let cases: [([UInt8], RecordError.Code)] = [
            ([], .truncated),
            ([0x02, 0x00], .unsupportedVersion),
            ([0x01], .truncated),
            ([0x01, 0x10], .unknownTag),
            ([0x01, 0xFF], .unknownTag),
            ([0x01, 0x0F], .invalidStructure),
            ([0x01, 0x03, 0x80], .truncated),
            ([0x01, 0x03, 0x80, 0x00], .invalidVarint),
            ([0x01, 0x04] + [UInt8](repeating: 0xFF, count: 9) + [0x02], .invalidVarint),
            ([0x01, 0x04] + [UInt8](repeating: 0x80, count: 10) + [0x01], .invalidVarint),
            ([0x01, 0x07, 0x02, 0xC3, 0x28], .invalidUTF8),
            ([0x01, 0x07, 0x02, 0xC0, 0x80], .invalidUTF8),
            ([0x01, 0x07, 0x03, 0xED, 0xA0, 0x80], .invalidUTF8),
            ([0x01, 0x07, 0x05, 0x61], .truncated),
            ([0x01, 0x07, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0x7F], .truncated),
            ([0x01, 0x06, 0x00, 0x00], .truncated),
            ([0x01, 0x0A, 0x00], .truncated),
            ([0x01, 0x03, 0x00, 0x00], .trailingBytes),
            ([0x01, 0x0D, 0x03, 0x00, 0x0F], .invalidStructure),
            ([0x01, 0x0D, 0x07, 0x01, 0x61], .truncated),
            ([0x01, 0x0D, 0x07, 0x01, 0xFF, 0x00, 0x0F], .invalidUTF8),
            ([0x01, 0x0E, 0x03, 0x00], .truncated),
        ]
        for (bytes, code) in cases {
            let parsed = recordError { _ = try bytes.withUnsafeBytes { try RecordValue(record: $0) } }
            #expect(parsed?.code == code, "RecordValue of \(bytes)")
        }
        // Decoding into a type sees the same problems as long as it reads the damaged part.
        #expect(
            recordError { _ = try RecordCoder.decode(String.self, from: [0x01, 0x07, 0x02, 0xC3, 0x28]) }?.code
                == .invalidUTF8)
        #expect(
            recordError { _ = try RecordCoder.decode(Int.self, from: [0x01, 0x03, 0x80, 0x00]) }?.code
                == .invalidVarint)
        #expect(
            recordError { _ = try RecordCoder.decode(Int.self, from: [0x02, 0x03, 0x00]) }?.code
                == .unsupportedVersion)
        #expect(
            recordError { _ = try RecordCoder.decode(Int.self, from: [0x01, 0x03, 0x00, 0x00]) }?.code
                == .trailingBytes)
        #expect(recordError { _ = try RecordCoder.decode(Int.self, from: [0x01, 0x42]) }?.code == .unknownTag)
        #expect(
            recordError { _ = try RecordCoder.decode(Address.self, from: [0x01, 0x0D, 0x07]) }?.code
                == .truncated)
    }

    @Test func malformedFieldErrorsNameTheField() throws {
        var bytes = try RecordCoder.encode(Keyed(value: "ab"))
        bytes[bytes.count - 2] = 0xFF
        let error = recordError { _ = try RecordCoder.decode(Keyed<String>.self, from: bytes) }
        #expect(error?.code == .invalidUTF8)
        #expect(error?.codingPath == "value")
        #expect(error?.description.hasPrefix("malformed record at byte") == true)
    }

    @Test func deepNestingIsRejectedInsteadOfExhaustingTheStack() throws {
        let depth = 100_000
        let arrays = [0x01] + [UInt8](repeating: 0x0E, count: depth) + [UInt8](repeating: 0x0F, count: depth)
        #expect(recordError { _ = try arrays.withUnsafeBytes { try RecordValue(record: $0) } }?.code == .nestingTooDeep)
        #expect(recordError { _ = try RecordCoder.decode([String].self, from: arrays) }?.code == .nestingTooDeep)
        var maps: [UInt8] = [0x01]
        for _ in 0..<depth { maps += [0x0D, 0x07, 0x01, 0x61] }
        maps += [UInt8](repeating: 0x0F, count: depth)
        #expect(
            recordError { _ = try maps.withUnsafeBytes { try RecordCoder.topLevelFields($0) } }?.code
                == .nestingTooDeep)
        // Nesting within the limit is fine.
        let shallow = [0x01] + [UInt8](repeating: 0x0E, count: 100) + [UInt8](repeating: 0x0F, count: 100)
        #expect(throws: Never.self) { _ = try shallow.withUnsafeBytes { try RecordValue(record: $0) } }
    }

    @Test func truncatingARecordAtEveryOffsetThrows() throws {
        let samples = [
            try RecordCoder.encode(Book.sample),
            try RecordCoder.encode(
                Derived(
                    base: Base(identifier: 1, createdAt: .distantPast), other: Base(identifier: 2, createdAt: .now),
                    listed: Base(identifier: 3, createdAt: .distantFuture), name: "n")),
            try RecordCoder.encode(Shape.rectangle(width: 1, height: 2)),
        ]
        for full in samples {
            for length in 0..<full.count {
                let prefix = Array(full.prefix(length))
                #expect(throws: RecordError.self) { try prefix.withUnsafeBytes { try RecordValue(record: $0) } }
                #expect(throws: RecordError.self) { try prefix.withUnsafeBytes { try RecordCoder.topLevelFields($0) } }
            }
        }
        let book = try RecordCoder.encode(Book.sample)
        for length in 0..<book.count {
            #expect(throws: RecordError.self) { try RecordCoder.decode(Book.self, from: Array(book.prefix(length))) }
        }
    }

    @Test func randomGarbageNeverCrashes() throws {
        let seed = UInt64(Date().timeIntervalSince1970 * 1000)
        print("randomGarbageNeverCrashes seed: \(seed)")
        var generator = SeededGenerator(seed: seed)
        let templates = [
            try RecordCoder.encode(Book.sample),
            try RecordCoder.encode(Interleaved(first: 1, inner: ["a": 1], list: ["x", "y"], last: "z")),
            try RecordCoder.encode([Shape.point, .label("a", -3), .circle(radius: .nan)]),
            try RecordCoder.encode(["k": [1.5, 2], "j": []]),
        ]
        var parsedCount = 0
        for index in 0..<10_000 {
            var bytes: [UInt8]
            if index % 2 == 0 {
                // Pure noise, usually with a valid version byte so parsing gets past it.
                let length = Int.random(in: 0...64, using: &generator)
                bytes = (0..<length).map { _ in UInt8.random(in: 0...0x11, using: &generator) }
                if !bytes.isEmpty, index % 4 == 0 { bytes[0] = RecordFormat.version }
            } else {
                // A valid record with a few bytes flipped, inserted or removed.
                bytes = templates[Int.random(in: 0..<templates.count, using: &generator)]
                for _ in 0..<Int.random(in: 1...3, using: &generator) {
                    let position = Int.random(in: 0..<bytes.count, using: &generator)
                    switch Int.random(in: 0..<3, using: &generator) {
                    case 0: bytes[position] = UInt8.random(in: .min ... .max, using: &generator)
                    case 1: bytes.insert(UInt8.random(in: 0...0x11, using: &generator), at: position)
                    default: if bytes.count > 1 { bytes.remove(at: position) }
                    }
                }
            }
            // Whatever parses must be canonical: re-encoding gives back exactly the input.
            if let value = try? bytes.withUnsafeBytes({ try RecordValue(record: $0) }) {
                parsedCount += 1
                #expect(value.recordBytes() == bytes, "seed \(seed), case \(index)")
                _ = value.jsonString(pretty: index % 3 == 0)
            }
            _ = try? bytes.withUnsafeBytes { try RecordCoder.topLevelFields($0) }
            _ = try? RecordCoder.decode(Book.self, from: bytes)
            _ = try? RecordCoder.decode(Interleaved.self, from: bytes)
            _ = try? RecordCoder.decode([Shape].self, from: bytes)
            _ = try? RecordCoder.decode([String: [Double]].self, from: bytes)
        }
        #expect(parsedCount < 10_000)
    }
}
