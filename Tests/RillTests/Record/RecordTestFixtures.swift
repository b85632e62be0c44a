import Foundation
import RillLocks

@testable import Rill

// Fixture types live inside the suite so their common names cannot clash with other tests in the module.
extension RecordCoderTests {
    /// Wraps a value in a keyed container, so round trips also cover the keyed path.
    struct Keyed<Value: Codable & Equatable>: Codable, Equatable {
        var value: Value
    }

    /// Wraps an encode-only value in a keyed container.
    struct EncodeOnly<Value: Encodable>: Encodable {
        var value: Value
    }

    struct Address: Codable, Equatable {
        var street: String
        var city: String
        var zip: String
    }

    struct Person: Codable, Equatable {
        var name: String
        var age: Int
        var address: Address
        var tags: [String]
    }

    struct Level3: Codable, Equatable {
        var flag: Bool
        var values: [Double]
    }

    struct Level2: Codable, Equatable {
        var title: String
        var deeper: Level3
        var optionalDeeper: Level3?
    }

    struct Level1: Codable, Equatable {
        var id: UUID
        var child: Level2
        var children: [Level2]
    }

    struct Optionals: Codable, Equatable {
        var present: Int?
        var absent: String?
        var nested: Address?
    }

    struct DoubleOptional: Codable, Equatable {
        var value: Int??
    }

    enum Color: String, Codable, Equatable {
        case red, green, blue = "BLUE"
    }

    enum Priority: Int, Codable, Equatable {
        case low = 1, high = 10, urgent = -5
    }

    enum Shape: Codable, Equatable {
        case point
        case circle(radius: Double)
        case rectangle(width: Double, height: Double)
        case label(String, Int)
        case nested(Address)
    }

    /// A key longer than 14 bytes: its length prefix alone would read as the end byte.
    struct LongKeys: Codable, Equatable {
        var createdByUserId: String
        var fifteenCharsKey: Int
        var long: Bool

        enum CodingKeys: String, CodingKey {
            case createdByUserId, fifteenCharsKey
            case long = """
                a key longer than 127 bytes, so that its length prefix needs a second varint byte; \
                xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx
                """
        }

        init(createdBy: String, fifteen: Int, long: Bool) {
            createdByUserId = createdBy
            fifteenCharsKey = fifteen
            self.long = long
        }
    }

    /// Writes into a parent container and two nested containers in interleaved order, the case that defeats a naive
    /// streaming encoder.
    struct Interleaved: Codable, Equatable {
        var first: Int
        var inner: [String: Int]
        var list: [String]
        var last: String

        enum CodingKeys: String, CodingKey {
            case first, inner, list, last
        }

        enum InnerKeys: String, CodingKey {
            case a, b, c
        }

        init(first: Int, inner: [String: Int], list: [String], last: String) {
            self.first = first
            self.inner = inner
            self.list = list
            self.last = last
        }

        func encode(to encoder: any Encoder) throws {
            var container = encoder.container(keyedBy: CodingKeys.self)
            var inner = container.nestedContainer(keyedBy: InnerKeys.self, forKey: .inner)
            var list = container.nestedUnkeyedContainer(forKey: .list)
            try container.encode(first, forKey: .first)
            try inner.encode(self.inner["a"] ?? 0, forKey: .a)
            try list.encode(self.list[0])
            try inner.encode(self.inner["b"] ?? 0, forKey: .b)
            // Asking again must continue the same map, not start a second one.
            var again = encoder.container(keyedBy: CodingKeys.self)
            try again.encode(last, forKey: .last)
            for element in self.list.dropFirst() { try list.encode(element) }
            try inner.encode(self.inner["c"] ?? 0, forKey: .c)
        }

        init(from decoder: any Decoder) throws {
            let container = try decoder.container(keyedBy: CodingKeys.self)
            first = try container.decode(Int.self, forKey: .first)
            last = try container.decode(String.self, forKey: .last)
            let inner = try container.nestedContainer(keyedBy: InnerKeys.self, forKey: .inner)
            self.inner = [
                "a": try inner.decode(Int.self, forKey: .a),
                "b": try inner.decode(Int.self, forKey: .b),
                "c": try inner.decode(Int.self, forKey: .c),
            ]
            var list = try container.nestedUnkeyedContainer(forKey: .list)
            var elements: [String] = []
            while !list.isAtEnd { elements.append(try list.decode(String.self)) }
            self.list = elements
        }
    }

    /// The "base" part of `Derived`, coded through `superEncoder` the way a superclass would be.
    struct Base: Codable, Equatable {
        var identifier: Int
        var createdAt: Date
    }

    /// Uses `superEncoder()`, `superEncoder(forKey:)` and an unkeyed `superEncoder()`, each filled after later writes
    /// to the parent.
    struct Derived: Codable, Equatable {
        var base: Base
        var other: Base
        var listed: Base
        var name: String

        enum CodingKeys: String, CodingKey {
            case other, items, name
        }

        init(base: Base, other: Base, listed: Base, name: String) {
            self.base = base
            self.other = other
            self.listed = listed
            self.name = name
        }

        func encode(to encoder: any Encoder) throws {
            var container = encoder.container(keyedBy: CodingKeys.self)
            let superEncoder = container.superEncoder()
            let otherEncoder = container.superEncoder(forKey: .other)
            var items = container.nestedUnkeyedContainer(forKey: .items)
            try items.encode("before")
            let listedEncoder = items.superEncoder()
            try items.encode("after")
            try container.encode(name, forKey: .name)
            try listed.encode(to: listedEncoder)
            try other.encode(to: otherEncoder)
            try base.encode(to: superEncoder)
        }

        init(from decoder: any Decoder) throws {
            let container = try decoder.container(keyedBy: CodingKeys.self)
            name = try container.decode(String.self, forKey: .name)
            base = try Base(from: container.superDecoder())
            other = try Base(from: container.superDecoder(forKey: .other))
            var items = try container.nestedUnkeyedContainer(forKey: .items)
            guard try items.decode(String.self) == "before" else {
                throw DecodingError.dataCorruptedError(in: items, debugDescription: "expected \"before\"")
            }
            listed = try Base(from: items.superDecoder())
            guard try items.decode(String.self) == "after", items.isAtEnd else {
                throw DecodingError.dataCorruptedError(in: items, debugDescription: "expected \"after\" last")
            }
        }
    }

    /// Encodes special types through every container kind, to check each path gives them their own tag.
    struct SpecialEverywhere: Codable, Equatable {
        var date: Date
        var uuid: UUID
        var data: Data
        var url: URL
        var decimal: Decimal

        enum CodingKeys: String, CodingKey {
            case keyed, unkeyed, single
        }

        init(date: Date, uuid: UUID, data: Data, url: URL, decimal: Decimal) {
            self.date = date
            self.uuid = uuid
            self.data = data
            self.url = url
            self.decimal = decimal
        }

        func encode(to encoder: any Encoder) throws {
            var container = encoder.container(keyedBy: CodingKeys.self)
            try container.encode(Keyed(value: date), forKey: .keyed)
            var unkeyed = container.nestedUnkeyedContainer(forKey: .unkeyed)
            try unkeyed.encode(uuid)
            try unkeyed.encode(data)
            try unkeyed.encode(url)
            try container.encode(SingleDecimal(value: decimal), forKey: .single)
        }

        init(from decoder: any Decoder) throws {
            let container = try decoder.container(keyedBy: CodingKeys.self)
            date = try container.decode(Keyed<Date>.self, forKey: .keyed).value
            var unkeyed = try container.nestedUnkeyedContainer(forKey: .unkeyed)
            uuid = try unkeyed.decode(UUID.self)
            data = try unkeyed.decode(Data.self)
            url = try unkeyed.decode(URL.self)
            decimal = try container.decode(SingleDecimal.self, forKey: .single).value
        }
    }

    /// Encodes a Decimal through a single-value container.
    struct SingleDecimal: Codable, Equatable {
        var value: Decimal

        init(value: Decimal) {
            self.value = value
        }

        func encode(to encoder: any Encoder) throws {
            var container = encoder.singleValueContainer()
            try container.encode(value)
        }

        init(from decoder: any Decoder) throws {
            value = try decoder.singleValueContainer().decode(Decimal.self)
        }
    }

    /// Throws from `encode(to:)`, to check that encoding errors name the failing path.
    struct Unencodable: Codable, Equatable {
        struct Refusal: Error {}

        func encode(to encoder: any Encoder) throws {
            throw Refusal()
        }

        init() {}

        init(from decoder: any Decoder) throws {}
    }

    struct FailingAddress: Encodable {
        var street = "Main"
        var zip = Unencodable()
    }

    struct FailingPerson: Encodable {
        var name = "Ann"
        var address = FailingAddress()
    }

    struct FailingList: Encodable {
        var tags: [Unencodable?] = [nil, nil, Unencodable()]
    }

    /// The six-field record used by the timing check and by the fuzz tests.
    struct Book: Codable, Equatable {
        var id: UUID
        var title: String
        var author: String
        var pages: Int
        var isRead: Bool
        var addedAt: Date

        static let sample = Book(
            id: UUID(uuidString: "E621E1F8-C36C-495A-93FC-0C247A3E6E5F")!, title: "Twenty Thousand Leagues",
            author: "Jules Verne", pages: 448, isRead: true,
            addedAt: Date(timeIntervalSinceReferenceDate: 817_654_528.123))
    }

    /// Records the coding paths user code sees, to check they match the position of the value.
    struct PathProbe: Codable, Equatable {
        static let seenEncoding = PathLog()
        static let seenDecoding = PathLog()

        func encode(to encoder: any Encoder) throws {
            Self.seenEncoding.append(RecordError.path(encoder.codingPath))
            var container = encoder.singleValueContainer()
            try container.encode(true)
        }

        init() {}

        init(from decoder: any Decoder) throws {
            Self.seenDecoding.append(RecordError.path(decoder.codingPath))
            _ = try decoder.singleValueContainer().decode(Bool.self)
        }
    }

    /// A thread-safe list of strings for `PathProbe`.
    final class PathLog: @unchecked Sendable {
        private let lock = NSLock()
        private var entries: [String] = []

        func append(_ entry: String) {
            lock.withLock { entries.append(entry) }
        }

        func drain() -> [String] {
            lock.withLock {
                defer { entries = [] }
                return entries
            }
        }
    }

    struct ProbeHolder: Codable, Equatable {
        var probe: PathProbe
        var list: [PathProbe]
        var map: [String: PathProbe]
    }
}
