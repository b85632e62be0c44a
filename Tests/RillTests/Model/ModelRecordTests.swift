import Foundation
import RillTestSupport
import RillWorkloads
import Testing

@testable import Rill

/// Models that read their records themselves (`init(record:)`): they read what `Decodable` reads,
/// fail where it fails, and fetch, evolve and sort as any model does.
@Suite struct ModelRecordTests {
    let directory = TemporaryDirectory()

    struct Inner: Codable, Equatable {
        var x: Int
        var y: String?
    }

    /// Reads its fields itself, in stored order.
    struct Item: PersistentModel, Equatable {
        var id: Int
        var name: String
        var score: Double
        var when: Date
        var tag: String?
        var tags: [String]
        var inner: Inner?
        var flag: Bool
        var uid: UUID
        var small: Int8

        static let indexes: [ModelIndex<Item>] = [ModelIndex(\.score), ModelIndex(\.name)]
    }

    /// The same record, its fields read backwards.
    struct Backwards: PersistentModel, Equatable {
        static let entityName = "Item"
        var id: Int
        var name: String
        var score: Double
        var when: Date
        var tag: String?
        var tags: [String]
        var inner: Inner?
        var flag: Bool
        var uid: UUID
        var small: Int8
    }

    /// Through `Decodable` only: the oracle.
    struct Decoded: PersistentModel, Equatable {
        static let entityName = "Item"
        var id: Int
        var name: String
        var score: Double
        var when: Date
        var tag: String?
        var tags: [String]
        var inner: Inner?
        var flag: Bool
        var uid: UUID
        var small: Int8
    }

    static func randomItem(id: Int, _ random: inout SeededGenerator) -> Item {
        let names = ["", "a", "Zoë", "ünïcode \u{1F600}", String(repeating: "long ", count: 40), "K"]
        let scores: [Double] = [
            0, -0.0, 1.5, -7.25, .infinity, -.infinity, .greatestFiniteMagnitude, .leastNonzeroMagnitude,
        ]
        return Item(
            id: id, name: names.randomElement(using: &random)!, score: scores.randomElement(using: &random)!,
            when: Date(
                timeIntervalSinceReferenceDate: Double(Int.random(in: -1_000_000_000...1_000_000_000, using: &random))),
            tag: Bool.random(using: &random) ? nil : "t\(Int.random(in: 0..<3, using: &random))",
            tags: (0..<Int.random(in: 0...3, using: &random)).map { "x\($0)" },
            inner: Bool.random(using: &random)
                ? nil : Inner(x: Int.random(in: Int.min...Int.max, using: &random), y: nil),
            flag: Bool.random(using: &random), uid: UUID(),
            small: Int8.random(in: Int8.min...Int8.max, using: &random))
    }

    /// What the record holds for `item`, read through `Decodable`.
    static func decoded(_ item: Item) -> Decoded {
        Decoded(
            id: item.id, name: item.name, score: item.score, when: item.when, tag: item.tag, tags: item.tags,
            inner: item.inner, flag: item.flag, uid: item.uid, small: item.small)
    }

    @Test func aModelReadsWhatDecodableReads() throws {
        var random = SeededGenerator(label: "model record")
        var spare: RecordDecoder?
        for id in [Int.min, -1, 0, 1, Int.max] + (0..<500).map({ $0 }) {
            let item = Self.randomItem(id: id, &random)
            let bytes = try RecordCoder.encode(item)
            let read = try bytes.withUnsafeBytes { try RecordCoder.decodeModel(Item.self, from: $0, reusing: &spare) }
            #expect(read == item)
            #expect(Self.decoded(read) == (try RecordCoder.decode(Decoded.self, from: bytes)))
            let backwards = try RecordCoder.decodeModel(Backwards.self, from: bytes)
            #expect(backwards.name == item.name && backwards.inner == item.inner && backwards.small == item.small)
        }
    }

    /// A record that lacks a field, or holds another kind of value there, fails as it fails
    /// through `Decodable`.
    @Test func missingAndMistypedFieldsFailAsThroughDecodable() throws {
        struct Partial: Encodable {
            var id = 1
            var name = "n"
        }
        struct Mistyped: Encodable {
            var id = 1
            var name = 5
        }
        let partial = try RecordCoder.encode(Partial())
        #expect(throws: DecodingError.self) { try RecordCoder.decode(Decoded.self, from: partial) }
        do {
            _ = try RecordCoder.decodeModel(Item.self, from: partial)
            Issue.record("a record without `score` decoded")
        } catch DecodingError.keyNotFound(let key, _) {
            #expect(key.stringValue == "score")
        }
        let mistyped = try RecordCoder.encode(Mistyped())
        do {
            _ = try RecordCoder.decodeModel(Item.self, from: mistyped)
            Issue.record("a number decoded as a String")
        } catch DecodingError.typeMismatch(let type, let context) {
            #expect(ObjectIdentifier(type) == ObjectIdentifier(String.self))
            #expect(context.codingPath.map(\.stringValue) == ["name"])
        }
        // Trailing bytes after the record are refused, as through `Decodable`.
        var random = SeededGenerator(seed: 3)
        let item = Self.randomItem(id: 3, &random)
        let trailing = try RecordCoder.encode(item) + [0]
        #expect(throws: RecordError.self) { try RecordCoder.decodeModel(Item.self, from: trailing) }
    }

    /// Damaged records (a byte changed, bytes cut off or put in, a key that is not UTF-8 among the
    /// entries a model does not read) fail where `Decodable` fails and read the same values where
    /// it reads them. A model reading its fields in stored order walks the map entry by entry
    /// instead of scanning it first, so of a record's several problems it may report another one:
    /// a damaged value it reads before the scan would have met a damaged entry after it. Where
    /// the whole map reads and a value does not, the error is the same kind.
    @Test func damagedRecordsFailAsThroughDecodable() throws {
        struct Extended: Encodable {
            var item: Item
            var extra: String
            func encode(to encoder: any Encoder) throws {
                try item.encode(to: encoder)
                var container = encoder.container(keyedBy: RecordCodingKey.self)
                try container.encode(extra, forKey: RecordCodingKey(stringValue: "zz"))
            }
        }
        func outcome<T>(_ read: () throws -> T) -> Result<T, any Error> { Result { try read() } }
        func kind(_ error: any Error) -> String {
            if let error = error as? RecordError { return "record \(error.code)" }
            if let error = error as? DecodingError {
                switch error {
                case .dataCorrupted: return "decoding dataCorrupted"
                case .keyNotFound: return "decoding keyNotFound"
                case .typeMismatch: return "decoding typeMismatch"
                case .valueNotFound: return "decoding valueNotFound"
                @unknown default: return "decoding"
                }
            }
            return "\(type(of: error))"
        }
        var random = SeededGenerator(label: "damaged model records")
        var spare: RecordDecoder?
        var failures = 0
        for id in 0..<3_000 {
            let item = Self.randomItem(id: id, &random)
            var bytes = try RecordCoder.encode(Extended(item: item, extra: "e"))
            switch Int.random(in: 0..<5, using: &random) {
            case 0:
                bytes[Int.random(in: 0..<bytes.count, using: &random)] = UInt8.random(in: 0...255, using: &random)
            case 1:
                bytes.removeLast(Int.random(in: 1...bytes.count, using: &random))
            case 2:
                bytes.insert(
                    UInt8.random(in: 0...255, using: &random), at: Int.random(in: 0...bytes.count, using: &random))
            case 3:
                // The extra key, which `Item` never reads, made invalid UTF-8.
                let key = Array("zz".utf8)
                if let start = (0..<(bytes.count - 1)).last(where: { Array(bytes[$0..<$0 + 2]) == key }) {
                    bytes[start] = 0xFF
                }
            default:
                for _ in 0..<Int.random(in: 1...4, using: &random) {
                    bytes[Int.random(in: 0..<bytes.count, using: &random)] ^=
                        1 << UInt8.random(in: 0..<8, using: &random)
                }
            }
            let read = outcome {
                try bytes.withUnsafeBytes { try RecordCoder.decodeModel(Item.self, from: $0, reusing: &spare) }
            }
            let oracle = outcome { try RecordCoder.decode(Decoded.self, from: bytes) }
            switch (read, oracle) {
            case (.success(let read), .success(let oracle)):
                // Compared as stored, so that a NaN equals itself.
                #expect(try RecordCoder.encode(Self.decoded(read)) == RecordCoder.encode(oracle), "record \(id)")
            case (.failure(let error), .failure(let expected)):
                failures += 1
                if expected is DecodingError {
                    #expect(kind(error) == kind(expected), "record \(id): \(error) vs \(expected)")
                } else {
                    #expect(error is RecordError || error is DecodingError, "record \(id): \(error)")
                }
            case (.success, .failure(let expected)):
                Issue.record("record \(id) read, where Decodable failed with \(expected): \(bytes)")
            case (.failure(let error), .success):
                Issue.record("record \(id) failed with \(error), where Decodable read it: \(bytes)")
            }
        }
        // Most damage is found, and some leaves a record that still reads.
        #expect(failures > 1_000 && failures < 3_000)
    }

    /// Fetches of a model that reads its records against brute force over the saved models.
    @Test func fetchesEqualBruteForce() throws {
        var random = SeededGenerator(label: "model record fetches")
        let container = try ModelContainer(
            for: Item.self, configurations: ModelConfiguration(url: directory.url.appendingPathComponent("store")))
        let context = container.mainContext
        var items: [Item] = []
        for id in 0..<300 {
            let item = Self.randomItem(id: id, &random)
            items.append(item)
            context.insert(item)
        }
        try context.save()
        for _ in 0..<40 {
            let low = [-Double.infinity, -1, 0, 1, 2].randomElement(using: &random)!
            let name = items.randomElement(using: &random)!.name
            let byScore = FetchDescriptor<Item>(
                predicate: #Predicate { $0.score > low }, sortBy: [SortDescriptor(\.score), SortDescriptor(\.id)])
            let expected = items.filter { $0.score > low }.sorted { ($0.score, $0.id) < ($1.score, $1.id) }
            #expect(try context.fetch(byScore) == expected)
            let byName = FetchDescriptor<Item>(predicate: #Predicate { $0.name == name && $0.flag })
            let named = try context.fetch(byName)
            #expect(Set(named.map(\.id)) == Set(items.filter { $0.name == name && $0.flag }.map(\.id)))
            #expect(named.allSatisfy { model in items.first { $0.id == model.id } == model })
        }
    }

    /// Relationships are not stored: `init(record:)` reads them empty, as `Decodable` does, and
    /// a stored null of a double optional stays `.some(nil)`.
    @Test func unstoredRelationshipsAndDoubleOptionalsReadAsThroughDecodable() throws {
        let card = Card(id: 1, title: "t", chef: nil, rating: .some(nil))
        let bytes = try RecordCoder.encode(card)
        let read = try RecordCoder.decodeModel(Card.self, from: bytes)
        #expect(read == card)
        #expect(read.rating == .some(nil))
        #expect(try RecordCoder.decode(Card.self, from: bytes) == read)
        let absent = try RecordCoder.decodeModel(
            Card.self, from: RecordCoder.encode(Card(id: 2, title: "u", chef: nil)))
        #expect(absent.rating == nil)
    }

    struct Card: PersistentModel, Equatable {
        var id: Int
        var title: String
        var ingredients = Related<Ingredient>()
        var chef: Reference<Chef>?
        var rating: Int?? = nil

        init(id: Int, title: String, chef: Reference<Chef>?, rating: Int?? = nil) {
            self.id = id
            self.title = title
            self.chef = chef
            self.rating = rating
        }

        init(record: borrowing ModelRecord) throws {
            id = try record.decode(forKey: "id")
            title = try record.decode(forKey: "title")
            ingredients = try record.decode(forKey: "ingredients")
            chef = try record.decodeIfPresent(forKey: "chef")
            rating = try record.decodeIfPresent(Int?.self, forKey: "rating")
        }

        func encode(to encoder: any Encoder) throws {
            var container = encoder.container(keyedBy: CodingKeys.self)
            try container.encode(id, forKey: .id)
            try container.encode(title, forKey: .title)
            try container.encode(ingredients, forKey: .ingredients)
            try container.encodeIfPresent(chef, forKey: .chef)
            // `.some(nil)` is stored as null, nil not at all.
            if let rating { try container.encode(rating, forKey: .rating) }
        }
    }

    struct NoteV1: PersistentModel, Equatable {
        static let entityName = "Note"
        var id: String
        var text: String
    }

    /// Version 2 adds `rank` with a default, and reads its records itself.
    struct NoteV2: PersistentModel, Equatable {
        static let entityName = "Note"
        var id: String
        var text: String
        var rank: Int

        static let evolution = ModelEvolution<NoteV2>(.added(\.rank, default: 7))
    }

    /// A record of version 1 lacks the added field: `init(record:)` fails with `keyNotFound`,
    /// and the evolution supplies the default.
    @Test func olderRecordsReadThroughTheEvolution() throws {
        let url = directory.url.appendingPathComponent("notes")
        do {
            let container = try ModelContainer(for: NoteV1.self, configurations: ModelConfiguration(url: url))
            container.mainContext.insert(NoteV1(id: "a", text: "one"))
            try container.mainContext.save()
        }
        let container = try ModelContainer(for: NoteV2.self, configurations: ModelConfiguration(url: url))
        container.mainContext.insert(NoteV2(id: "b", text: "two", rank: 3))
        try container.mainContext.save()
        let notes = try container.mainContext.fetch(FetchDescriptor<NoteV2>(sortBy: [SortDescriptor(\.id)]))
        #expect(notes == [NoteV2(id: "a", text: "one", rank: 7), NoteV2(id: "b", text: "two", rank: 3)])
    }
}

extension ModelRecordTests.Item {
    init(record: borrowing ModelRecord) throws {
        id = try record.decode(forKey: "id")
        name = try record.decode(forKey: "name")
        score = try record.decode(forKey: "score")
        when = try record.decode(forKey: "when")
        tag = try record.decodeIfPresent(forKey: "tag")
        tags = try record.decode(forKey: "tags")
        inner = try record.decodeIfPresent(forKey: "inner")
        flag = try record.decode(forKey: "flag")
        uid = try record.decode(forKey: "uid")
        small = try record.decode(forKey: "small")
    }
}

extension ModelRecordTests.Backwards {
    init(record: borrowing ModelRecord) throws {
        small = try record.decode(forKey: "small")
        uid = try record.decode(forKey: "uid")
        flag = try record.decode(forKey: "flag")
        inner = try record.decodeIfPresent(forKey: "inner")
        tags = try record.decode(forKey: "tags")
        tag = try record.decodeIfPresent(forKey: "tag")
        when = try record.decode(forKey: "when")
        score = try record.decode(forKey: "score")
        name = try record.decode(forKey: "name")
        id = try record.decode(forKey: "id")
        #expect(record.contains("name") && !record.contains("absent"))
    }
}

extension ModelRecordTests.NoteV2 {
    init(record: borrowing ModelRecord) throws {
        id = try record.decode(forKey: "id")
        text = try record.decode(forKey: "text")
        rank = try record.decode(forKey: "rank")
    }
}
