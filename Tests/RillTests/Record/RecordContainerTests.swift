import Foundation
import Testing

@testable import Rill

extension RecordCoderTests {
    /// Stored as `{"a": 1, "list": [nil, 1, nil], "n": nil}`.
    private struct Stored: Encodable {
        var a = 1
        var list: [Int?] = [nil, 1, nil]
        var n: Int?

        enum CodingKeys: CodingKey { case a, list, n }

        func encode(to encoder: any Encoder) throws {
            var container = encoder.container(keyedBy: CodingKeys.self)
            try container.encode(a, forKey: .a)
            try container.encode(list, forKey: .list)
            try container.encodeNil(forKey: .n)
        }
    }

    /// Records what the decoding containers report, so the test can check each answer.
    private struct Inspector: Decodable {
        var allKeys: [String] = []
        var contains: [Bool] = []
        var nilChecks: [Bool] = []
        var count: Int?
        var trace: [String] = []

        init(from decoder: any Decoder) throws {
            let container = try decoder.container(keyedBy: RecordCodingKey.self)
            let again = try decoder.container(keyedBy: RecordCodingKey.self)
            let key = { (name: String) in RecordCodingKey(stringValue: name) }
            allKeys = again.allKeys.map(\.stringValue)
            contains = [container.contains(key("a")), container.contains(key("n")), container.contains(key("zz"))]
            nilChecks = [try container.decodeNil(forKey: key("a")), try container.decodeNil(forKey: key("n"))]
            if (try? container.decodeNil(forKey: key("zz"))) == nil { trace.append("decodeNil(missing) throws") }
            if try container.decodeIfPresent(Int.self, forKey: key("zz")) == nil { trace.append("ifPresent(missing)") }
            if try container.decodeIfPresent(Int.self, forKey: key("n")) == nil { trace.append("ifPresent(null)") }
            if try container.decodeIfPresent(Int?.self, forKey: key("n")) == .some(nil) {
                trace.append("ifPresent(Int?, null) = .some(nil)")
            }
            let missingSuper = try container.superDecoder(forKey: key("zz"))
            if try missingSuper.singleValueContainer().decodeNil() { trace.append("missing superDecoder is null") }

            var list = try container.nestedUnkeyedContainer(forKey: key("list"))
            count = list.count
            trace.append("index \(list.currentIndex) nil \(try list.decodeNil())")
            trace.append("index \(list.currentIndex) nil \(try list.decodeNil())")
            trace.append("index \(list.currentIndex) int \(try list.decode(Int.self))")
            trace.append("atEnd \(list.isAtEnd)")
            trace.append("index \(list.currentIndex) nil \(try list.decodeNil())")
            trace.append("atEnd \(list.isAtEnd)")
            do {
                _ = try list.decode(Int.self)
            } catch DecodingError.valueNotFound(_, let context) {
                trace.append("past end: \(RecordError.path(context.codingPath))")
            }
            var fresh = try container.nestedUnkeyedContainer(forKey: key("list"))
            trace.append("fresh \(try fresh.decode(Int?.self) as Any)")
        }
    }

    @Test func decodingContainersAnswerQueriesCorrectly() throws {
        let inspector = try RecordCoder.decode(Inspector.self, from: RecordCoder.encode(Stored()))
        #expect(inspector.allKeys == ["a", "list", "n"])
        #expect(inspector.contains == [true, true, false])
        #expect(inspector.nilChecks == [false, true])
        #expect(inspector.count == 3)
        #expect(
            inspector.trace == [
                "decodeNil(missing) throws", "ifPresent(missing)", "ifPresent(null)",
                "ifPresent(Int?, null) = .some(nil)",
                "missing superDecoder is null",
                "index 0 nil true", "index 1 nil false", "index 1 int 1", "atEnd false", "index 2 nil true",
                "atEnd true",
                "past end: list[3]", "fresh nil",
            ])
    }

    /// Keeps a container alive past the end of the `encode(to:)` that created it.
    private final class ContainerStash: @unchecked Sendable {
        var container: KeyedEncodingContainer<RecordCodingKey>?
    }

    private struct Stasher: Encodable {
        let stash: ContainerStash

        func encode(to encoder: any Encoder) throws {
            stash.container = encoder.container(keyedBy: RecordCodingKey.self)
        }
    }

    private struct LateWriter: Encodable {
        func encode(to encoder: any Encoder) throws {
            let stash = ContainerStash()
            var container = encoder.container(keyedBy: RecordCodingKey.self)
            try container.encode(Stasher(stash: stash), forKey: RecordCodingKey(stringValue: "inner"))
            try stash.container?.encode(1, forKey: RecordCodingKey(stringValue: "late"))
        }
    }

    @Test func writingThroughAContainerAfterItsValueFinishedThrows() throws {
        let error = recordError { _ = try RecordCoder.encode(LateWriter()) }
        #expect(error?.code == .invalidContainerUse)
    }

    @Test func nestedContainersFilledInsideAChildValueRoundTrip() throws {
        // The nested containers of `Interleaved` live inside a field and inside array elements here, so their
        // splice points sit in a buffer shared with the parent.
        let value = Keyed(value: [
            Interleaved(first: 1, inner: ["a": 1, "b": 2, "c": 3], list: ["p", "q"], last: "x"),
            Interleaved(first: 2, inner: ["a": 4, "b": 5, "c": 6], list: ["r"], last: "y"),
        ])
        try expectRoundTrip(value)
        try expectRoundTrip([Shape.nested(Address(street: "a", city: "b", zip: "c")), .rectangle(width: 3, height: 4)])
    }
}
