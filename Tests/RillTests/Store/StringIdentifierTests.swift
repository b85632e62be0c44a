import Foundation
import RillStorage
import RillTestSupport
import RillWorkloads
import Testing

@testable import Rill

/// String identifiers are compared as Swift compares strings: spellings Swift calls equal
/// (canonically equivalent) name one model, as they are one key of a `Dictionary`. Checked against
/// a dictionary of the same models, over spellings that differ in composition and in the order of
/// combining marks; and the move of a store keyed by format 3 to format 4.
@Suite struct StringIdentifierTests {
    let directory = TemporaryDirectory()

    struct Word: PersistentModel, Equatable {
        var id: String
        var label: String
        var count: Int
        static let indexes: [ModelIndex<Word>] = [ModelIndex(\.count)]
    }

    struct Gloss: PersistentModel, Equatable {
        var id: String
        var word: Reference<Word>
        static let relationships: [ModelRelationship<Gloss>] = [.reference(\.word)]
    }

    /// Groups of spellings, each group one string to Swift: composed and decomposed forms, a
    /// singleton (U+212B ANGSTROM SIGN), marks in either order, Hangul syllables and jamo, and
    /// text that needs no normalization.
    static let spellings: [[String]] = [
        ["caf\u{E9}", "cafe\u{301}"],
        ["\u{C5}", "A\u{30A}", "\u{212B}"],
        ["q\u{323}\u{307}", "q\u{307}\u{323}"],
        ["\u{1E0B}\u{323}", "d\u{323}\u{307}", "\u{1E0D}\u{307}"],
        ["\u{D55C}", "\u{1112}\u{1161}\u{11AB}"],
        ["\u{F73}x", "\u{F71}\u{F72}x"],
        ["plain"],
        ["e"],
        ["\u{301}"],
    ]

    @Test func spellingsSwiftCallsEqualAreOneModel() throws {
        for group in Self.spellings {
            for spelling in group { #expect(spelling == group[0]) }
        }
        var random = SeededGenerator(label: "string identifiers")
        let container = try ModelContainer(
            for: Word.self, configurations: ModelConfiguration(url: directory.url.appendingPathComponent("store")))
        let context = ModelContext(container)
        // The oracle: what Swift's own dictionary keeps of the same inserts and deletes.
        var stored: [String: Word] = [:]
        var staged = stored
        let all = Self.spellings.flatMap { $0 }
        for round in 0..<60 {
            for _ in 0..<Int.random(in: 1...6, using: &random) {
                let id = all.randomElement(using: &random)!
                if Int.random(in: 0..<4, using: &random) == 0 {
                    if let model = staged[id] {
                        // Deleted by another spelling of its identifier.
                        context.delete(Word(id: id, label: model.label, count: model.count))
                        staged[id] = nil
                    }
                } else {
                    let word = Word(id: id, label: "\(round)", count: Int.random(in: 0..<5, using: &random))
                    context.insert(word)
                    staged[id] = word
                }
            }
            try expectSame(context, staged)
            if Bool.random(using: &random) {
                try context.save()
                stored = staged
            } else {
                context.rollback()
                staged = stored
            }
            try expectSame(context, stored)
        }
        // Every spelling of each stored identifier finds its model.
        for group in Self.spellings {
            for spelling in group {
                #expect(try context.model(Word.self, id: spelling) == stored[spelling])
                let found = try context.fetch(FetchDescriptor(predicate: #Predicate<Word> { $0.id == spelling }))
                #expect(found == stored[spelling].map { [$0] } ?? [])
            }
        }
    }

    /// The context's models against the oracle's: the same identifiers, each with the model the
    /// oracle keeps under it; fetches by identifier, by count and sorted by identifier agree.
    private func expectSame(_ context: ModelContext, _ oracle: [String: Word]) throws {
        let fetched = try context.fetch(FetchDescriptor<Word>())
        #expect(fetched.count == oracle.count)
        for word in fetched { #expect(oracle[word.id] == word, "\(Array(word.id.unicodeScalars))") }
        #expect(try context.fetchCount(FetchDescriptor<Word>()) == oracle.count)
        let ids = try context.fetchIdentifiers(FetchDescriptor<Word>())
        #expect(Set(ids) == Set(oracle.keys))
        for count in 0..<5 {
            let matches = try context.fetch(FetchDescriptor(predicate: #Predicate<Word> { $0.count == count }))
            #expect(Set(matches.map(\.id)) == Set(oracle.values.filter { $0.count == count }.map(\.id)))
        }
        let sorted = try context.fetch(FetchDescriptor<Word>(sortBy: [SortDescriptor(\.id)])).map(\.id)
        #expect(sorted.count == oracle.count)
        for (earlier, later) in zip(sorted, sorted.dropFirst()) { #expect(!(later < earlier)) }
    }

    @Test func aFormatThreeStoreMovesItsRecordsToNFCKeysInOneCommit() throws {
        let url = directory.url.appendingPathComponent("old")
        let decomposed = "cafe\u{301}"
        let angstrom = "\u{212B}"
        // The store as format 3 wrote it: string identifiers keyed as written, references too.
        try {
            let container = try ModelContainer(for: Word.self, Gloss.self, configurations: ModelConfiguration(url: url))
            let store = container.store
            let words = try #require(try store.entity(named: "Word"))
            let glosses = try #require(try store.entity(named: "Gloss"))
            func rawKey(_ id: String) -> [UInt8] { [IdentifierKind.string.rawValue] + Array(id.utf8) }
            let models = [
                Word(id: decomposed, label: "decomposed", count: 1), Word(id: "caf\u{E9}", label: "composed", count: 2),
                Word(id: angstrom, label: "angstrom", count: 3), Word(id: "plain", label: "plain", count: 4),
            ]
            _ = try store.commit(
                models.map {
                    PreparedChange(entity: words, key: rawKey($0.id), operation: .upsert(try ModelContext.encode($0)))
                }, author: nil)
            // Written as a save of format 3 wrote it (a save now finds no Word keyed in NFC).
            let gloss = Gloss(id: "glosse\u{301}", word: Reference(angstrom))
            let record = try ModelContext.encode(gloss)
            try store.withWriteTransaction { txn in
                let references = try #require(try txn.database(named: Store.referencesDatabaseName, create: true))
                try txn.put([1], for: Store.referencesMarkerKey, in: store.meta)
                try txn.put(record, for: rawKey(gloss.id), in: glosses.database)
                let entry = try ReferenceKey.make(
                    target: "Word", targetKey: rawKey(angstrom), source: "Gloss", field: "word",
                    sourceKey: rawKey(gloss.id))
                try txn.put([], for: entry, in: references)
                let next = try store.log.next(in: txn)
                let change = LogEntry.Change(
                    kind: .insert, entity: "Gloss", key: rawKey(gloss.id), changedFields: [], record: record,
                    before: nil)
                try store.log.append(
                    LogEntry(sequence: next.sequence, timestamp: next.timestamp, author: nil, changes: [change]),
                    in: txn)
                try txn.put([0, 0, 0, 3], for: Array("format".utf8), in: store.meta)
            }
        }()

        let container = try ModelContainer(for: Word.self, Gloss.self, configurations: ModelConfiguration(url: url))
        let store = container.store
        let context = ModelContext(container)
        #expect(
            try store.withReadTransaction { try $0.get(Array("format".utf8), in: store.meta).map(Array.init) } == [
                0, 0, 0, 4,
            ])
        let entry = try #require(try store.entries(after: 2).first)
        #expect(entry.author == "rill: string identifiers keyed in NFC")
        // The decomposed café and the angstrom sign moved, the gloss too; the composed café kept its record.
        #expect(entry.changes.filter { $0.kind == .delete }.count == 3)
        #expect(entry.changes.filter { $0.kind == .insert }.count == 2)
        #expect(try context.fetch(FetchDescriptor<Word>()).count == 3)
        #expect(try context.model(Word.self, id: decomposed)?.label == "composed")
        #expect(try context.model(Word.self, id: "\u{C5}")?.label == "angstrom")
        #expect(try context.model(Gloss.self, id: "glosse\u{301}") != nil)
        for name in ["Word", "Gloss"] {
            let entity = try #require(try store.entity(named: name))
            try store.forEachRecord(of: entity) { key, _ in
                #expect(Store.normalizedIdentifierKey(key) == nil)
                return true
            }
        }
        #expect(try store.check().isHealthy)
        // The reference index follows: the gloss still holds the angstrom's record.
        let word = try #require(try context.model(Word.self, id: angstrom))
        context.delete(word)
        #expect(throws: RillError.self) { try context.save() }
        context.rollback()
        // Opening it again writes nothing.
        let head = try store.head()
        _ = try ModelContainer(for: Word.self, Gloss.self, configurations: ModelConfiguration(url: url))
        #expect(try store.head() == head)
    }
}
