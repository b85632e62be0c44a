import Foundation
import RillStorage
import RillTestSupport
import Testing

@testable import Rill

/// The schema a model type registers: what its `init(from:)` reads, learned without an
/// instance; kept in the catalog with a version that moves only when it changes; and what JSON
/// writes and text queries are checked against, so an optional field no record holds yet can be
/// written and queried.
@Suite struct ModelSchemaTests {
    let directory = TemporaryDirectory()

    enum Level: String, Codable, CaseIterable, Sendable { case low, high }
    enum Rank: Int, Codable, CaseIterable, Sendable { case first = 1, second }

    struct Everything: PersistentModel {
        struct Part: Codable, Sendable {
            var label: String
            var weight: Float?
        }
        var id: UUID
        var count: UInt16
        var ratio: Double
        var price: Decimal
        var site: URL
        var blob: Data
        var when: Date
        var flags: [Bool]
        var parts: [Part]
        var extras: [String: Int]
        var level: Level
        var rank: Rank?
        var note: String?
    }

    @Test func theProbeLearnsEveryKindNestingAndOptionalWithoutAnInstance() throws {
        let gadget = try #require(ModelSchemaProbe.schema(of: Gadget.self))
        #expect(
            gadget.kinds.jsonString()
                == #"{"id":"int","name":"string","maker":"string","price":"double","stock":"int","rating":"double","#
                + #""tags":["string"],"released":"date","active":"bool","spec":{"weight":"int","color":"string"}}"#)
        #expect(gadget.optional == ["maker", "rating"])

        let everything = try #require(ModelSchemaProbe.schema(of: Everything.self))
        #expect(
            everything.kinds.jsonString()
                == #"{"id":"uuid","count":"uint","ratio":"double","price":"decimal","site":"url","blob":"data","#
                + #""when":"date","flags":["bool"],"parts":[{"label":"string","weight":"float"}],"extras":"any","#
                + #""level":"string","rank":"int","note":"string"}"#)
        #expect(everything.optional == ["parts.[].weight", "rank", "note"])
    }

    /// A type whose decoding refuses the probe's placeholders has no schema, and registers none.
    struct Picky: PersistentModel {
        var id: Int
        var code: String
        init(from decoder: any Decoder) throws {
            let container = try decoder.container(keyedBy: CodingKeys.self)
            id = try container.decode(Int.self, forKey: .id)
            code = try container.decode(String.self, forKey: .code)
            guard !code.isEmpty else {
                throw DecodingError.dataCorruptedError(forKey: .code, in: container, debugDescription: "empty")
            }
        }
    }

    @Test func aTypeThatRefusesTheProbeRegistersNoSchema() throws {
        #expect(ModelSchemaProbe.schema(of: Picky.self) == nil)
        let container = try ModelContainer(
            for: Picky.self, configurations: ModelConfiguration(url: directory.url.appendingPathComponent("store")))
        #expect(try container.store.schema(of: "Picky") == nil)
    }

    /// Version 1 of a note, then version 2 with an optional field and an index.
    struct NoteV1: PersistentModel {
        static let entityName = "Note"
        var id: String
        var text: String
    }

    struct NoteV2: PersistentModel {
        static let entityName = "Note"
        static let indexes: [ModelIndex<NoteV2>] = [ModelIndex(\.text)]
        var id: String
        var text: String
        var tag: String?
    }

    @Test func theSchemaIsKeptWithAVersionThatMovesOnlyWhenItChanges() throws {
        let url = directory.url.appendingPathComponent("store")
        do {
            let container = try ModelContainer(for: NoteV1.self, configurations: ModelConfiguration(url: url))
            container.mainContext.insert(NoteV1(id: "a", text: "first"))
            try container.mainContext.save()
            let schema = try #require(try container.store.schema(of: "Note"))
            #expect(schema.version == 1 && schema.optional.isEmpty && schema.indexes.isEmpty)
        }
        // Opening again with the same model writes nothing.
        let transactionBefore = try Environment(directory: url.path).lastTransactionID
        do {
            let container = try ModelContainer(for: NoteV1.self, configurations: ModelConfiguration(url: url))
            #expect(try container.store.schema(of: "Note")?.version == 1)
        }
        #expect(try Environment(directory: url.path).lastTransactionID == transactionBefore)

        let container = try ModelContainer(for: NoteV2.self, configurations: ModelConfiguration(url: url))
        let schema = try #require(try container.store.schema(of: "Note"))
        #expect(schema.version == 2 && schema.optional == ["tag"] && schema.indexes == ["text"])
        #expect(schema.kinds.jsonString() == #"{"id":"string","text":"string","tag":"string"}"#)

        // No record holds `tag` yet: a JSON write of it is stored as the model reads it, and a
        // text query of it is not refused as naming a field the entity lacks.
        let run = try runBuilt("rill", ["insert", url.path, "Note", #"{"id":"b","text":"second","tag":"x"}"#])
        #expect(run.status == 0, "\(run.error)")
        let query = try runBuilt("rill", ["query", "--json", url.path, #"Note where tag == "x""#])
        #expect(query.status == 0 && query.output.contains(#""id":"b""#), "\(query.error)")
        let fetched = try container.mainContext.fetch(FetchDescriptor<NoteV2>(sortBy: [SortDescriptor(\.id)]))
        #expect(fetched.map(\.tag) == [nil, "x"])

        let printed = try runBuilt("rill", ["schema", url.path])
        #expect(printed.status == 0)
        #expect(
            printed.output
                == "Note (String identifiers), schema version 2\n  id    string\n  text  string\n  tag   string?\n"
                + "  indexes: (text)\n", "\(printed.output)")
        let json = try runBuilt("rill", ["schema", "--json", url.path, "Note"])
        #expect(
            json.output.contains(
                #""schema":{"version":2,"fields":{"id":"string","text":"string","tag":"string"},"optional":["tag"],"indexes":["text"],"defaulted":[],"renamed":{}}"#
            ), "\(json.output)")
        let unknown = try runBuilt("rill", ["schema", url.path, "Nope"])
        #expect(unknown.status == 1 && unknown.error.contains("no entity Nope"))
    }
}
