import Foundation
import RillTestSupport
import RillWorkloads
import Testing

@testable import Rill

/// Typed ascending sorts on strings served by an index walk: every result against Swift's own
/// answer (`Predicate.evaluate`, `sorted(using:)`) and against the same fetch of the same records
/// with no index (sorted in memory), on strings of scalars below U+0300 (read in key order), on
/// strings past it (the fetch then sorts in memory), and on the pairs whose key order Swift's `<`
/// departs from.
@Suite struct StringSortWalkTests {
    let directory = TemporaryDirectory()

    struct Note: PersistentModel, Equatable {
        static let entityName = "Note"
        var id: Int
        var title: String
        var tag: String?
        var group: Int

        static let indexes: [ModelIndex<Note>] = [ModelIndex(\.title), ModelIndex(\.tag), ModelIndex(\.group, \.title)]
    }

    /// The same records with no index: every fetch of it is sorted in memory.
    struct PlainNote: PersistentModel, Equatable {
        static let entityName = "PlainNote"
        var id: Int
        var title: String
        var tag: String?
        var group: Int
    }

    /// Pieces of strings whose scalars are all below U+0300: a zero byte, DEL, Latin-1, the last
    /// scalar below U+0300, and the targets of singletons (Å, K, `).
    static let keyOrderPieces = [
        "a", "b", "B", "Z", "K", "k", "0", "9", " ", "-", "~", "`", ";", "\u{0}", "\u{7F}", "é", "Å", "ß", "ÿ",
        "\u{2B9}", "\u{2FF}",
    ]
    /// Pieces past U+0300: combining marks, CJK, an emoji, a ligature, precomposed Hangul.
    static let otherPieces = ["e\u{301}", "\u{327}", "中", "😀", "\u{FB01}", "\u{AC00}", "\u{3A9}", "\u{4E00}"]

    static func randomTitle(_ pieces: [String], using random: inout SeededGenerator) -> String {
        // Now and then a value longer than an index key holds, cut in its key.
        if Int.random(in: 0..<12, using: &random) == 0 {
            return String(repeating: "x", count: 600) + pieces.randomElement(using: &random)!
        }
        return (0..<Int.random(in: 0...4, using: &random)).map { _ in pieces.randomElement(using: &random)! }.joined()
    }

    /// Strings of `pieces` on which Swift's `<` is a strict weak order (so that `sorted(using:)`
    /// has one answer): each string is kept only if it compares with those kept before as their
    /// NFC forms do.
    static func consistentTitles(_ pieces: [String], count: Int, using random: inout SeededGenerator) -> [String] {
        var titles: [String] = []
        while titles.count < count {
            let title = randomTitle(pieces, using: &random)
            let nfc = Array(title._nfcCodeUnits)
            let agrees = titles.allSatisfy { other in
                let otherNFC = Array(other._nfcCodeUnits)
                return (title < other) == nfc.lexicographicallyPrecedes(otherNFC)
                    && (other < title) == otherNFC.lexicographicallyPrecedes(nfc)
            }
            if agrees { titles.append(title) }
        }
        return titles
    }

    /// `count` notes whose titles and tags are drawn from `titles` (a tag nil half the time).
    static func randomNotes(_ count: Int, titles: [String], using random: inout SeededGenerator) -> [Note] {
        (0..<count).map { id in
            Note(
                id: id, title: titles.randomElement(using: &random)!,
                tag: Bool.random(using: &random) ? nil : titles.randomElement(using: &random)!,
                group: Int.random(in: 0..<4, using: &random))
        }
    }

    func saved(_ notes: [Note], name: String) throws -> ModelContainer {
        let container = try ModelContainer(
            for: Note.self, PlainNote.self,
            configurations: ModelConfiguration(url: directory.url.appendingPathComponent(name)))
        for note in notes {
            container.mainContext.insert(note)
            container.mainContext.insert(PlainNote(id: note.id, title: note.title, tag: note.tag, group: note.group))
        }
        try container.mainContext.save()
        return container
    }

    typealias Case = (predicate: Predicate<Note>?, plain: Predicate<PlainNote>?, text: String)

    static func randomCase(titles: [String], using random: inout SeededGenerator) -> Case {
        let group = Int.random(in: 0..<4, using: &random)
        let title = titles.randomElement(using: &random)!
        switch Int.random(in: 0..<5, using: &random) {
        case 0: return (#Predicate { $0.group == group }, #Predicate { $0.group == group }, "group == \(group)")
        case 1: return (#Predicate { $0.tag == nil }, #Predicate { $0.tag == nil }, "tag == nil")
        case 2:
            return (
                #Predicate { $0.group == group && $0.title != title },
                #Predicate { $0.group == group && $0.title != title },
                "group == \(group) && title != \(title.debugDescription)"
            )
        default: return (nil, nil, "everything")
        }
    }

    /// Random fetches sorted by `title` (or `tag`, or `group` then `title`), with random windows:
    /// each against Swift's own answer and the unindexed entity's; returns how many were served
    /// by a walk of an index in the sort's order.
    func checkRandomFetches(
        _ container: ModelContainer, _ notes: [Note], titles: [String], rounds: Int, label: String,
        using random: inout SeededGenerator
    ) throws -> Int {
        let context = container.mainContext
        let sorts: [(note: [SortDescriptor<Note>], plain: [SortDescriptor<PlainNote>], text: String)] = [
            ([SortDescriptor(\.title)], [SortDescriptor(\.title)], "title"),
            (
                [SortDescriptor(\.title, comparator: .lexical)], [SortDescriptor(\.title, comparator: .lexical)],
                "title (lexical)"
            ),
            ([SortDescriptor(\.tag)], [SortDescriptor(\.tag)], "tag"),
            (
                [SortDescriptor(\.group), SortDescriptor(\.title)], [SortDescriptor(\.group), SortDescriptor(\.title)],
                "group, title"
            ),
            ([SortDescriptor(\.title, order: .reverse)], [SortDescriptor(\.title, order: .reverse)], "title desc"),
        ]
        var walked = 0
        for round in 0..<rounds {
            let (predicate, plainPredicate, text) = Self.randomCase(titles: titles, using: &random)
            let sort = sorts.randomElement(using: &random)!
            var descriptor = FetchDescriptor<Note>(predicate: predicate, sortBy: sort.note)
            var plain = FetchDescriptor<PlainNote>(predicate: plainPredicate, sortBy: sort.plain)
            if Int.random(in: 0..<4, using: &random) != 0 {
                descriptor.fetchLimit = Int.random(in: 0...30, using: &random)
                plain.fetchLimit = descriptor.fetchLimit
            }
            if Bool.random(using: &random) {
                descriptor.fetchOffset = Int.random(in: 0...20, using: &random)
                plain.fetchOffset = descriptor.fetchOffset
            }
            let matches = try notes.filter { try predicate?.evaluate($0) ?? true }
            let expected = matches.sorted(using: sort.note + [SortDescriptor(\Note.id)])
            let window = Array(expected.dropFirst(descriptor.fetchOffset ?? 0).prefix(descriptor.fetchLimit ?? .max))
            let fetched = try context.fetch(descriptor).map(\.id)
            let explain = try context.explain(descriptor)
            let message =
                "\(label) round \(round): \(text), sort \(sort.text), offset \(descriptor.fetchOffset ?? 0), limit \(descriptor.fetchLimit.map(String.init) ?? "none"), seed \(random.seed)\n\(explain)"
            #expect(fetched == window.map(\.id), "\(message)")
            #expect(try context.fetch(plain).map(\.id) == fetched, "\(message)")
            if explain.contains("order: from the index") { walked += 1 }
            if fetched != window.map(\.id) { break }
        }
        return walked
    }

    @Test func randomSortsOfStringsInKeyOrderMatchSwift() throws {
        var random = SeededGenerator(label: "string sort walks, key order")
        let titles = Self.consistentTitles(Self.keyOrderPieces, count: 150, using: &random)
        let notes = Self.randomNotes(800, titles: titles, using: &random)
        let container = try saved(notes, name: "key order")
        let walked = try checkRandomFetches(
            container, notes, titles: titles, rounds: 250, label: "key order", using: &random)
        #expect(walked > 40)
        print("[string sort walks] 250 fetches matched Swift and the sort in memory; \(walked) read in index order")
    }

    @Test func randomSortsOfOtherStringsMatchSwift() throws {
        var random = SeededGenerator(label: "string sort walks, other strings")
        let titles = Self.consistentTitles(Self.keyOrderPieces + Self.otherPieces, count: 150, using: &random)
        let notes = Self.randomNotes(800, titles: titles, using: &random)
        let container = try saved(notes, name: "other")
        _ = try checkRandomFetches(container, notes, titles: titles, rounds: 250, label: "other", using: &random)
    }

    /// Pairs whose order under Swift's `<` is not their keys' order, the other string's key the
    /// smaller: read first, it sends the fetch to the sort in memory.
    @Test func stringsSwiftOrdersApartFromTheirKeysAreSortedInMemory() throws {
        // KELVIN SIGN's NFC is "K": its key is smaller than "K;"'s, yet Swift calls "K;" the
        // smaller. ANGSTROM SIGN's NFC is "Å": Swift calls neither of it and "Åb" less than the
        // other.
        let cases: [(partner: String, other: String)] = [("\u{212A}", "K;"), ("\u{212B}", "Åb"), ("\u{1FEF}", "`a")]
        for (index, pair) in cases.enumerated() {
            let notes = [
                Note(id: 1, title: pair.other, tag: pair.other, group: 1),
                Note(id: 2, title: pair.partner, tag: pair.partner, group: 1),
                Note(id: 3, title: "z", tag: "z", group: 1),
            ]
            let container = try saved(notes, name: "pair \(index)")
            let context = container.mainContext
            let sorts: [[SortDescriptor<Note>]] = [[SortDescriptor(\.title)], [SortDescriptor(\.tag)]]
            let predicates: [Predicate<Note>?] = [nil, #Predicate { $0.group == 1 }]
            for sort in sorts {
                for predicate in predicates {
                    for limit in [1, 2, 3] {
                        var descriptor = FetchDescriptor<Note>(predicate: predicate, sortBy: sort)
                        descriptor.fetchLimit = limit
                        let expected = notes.sorted(using: sort + [SortDescriptor(\Note.id)]).prefix(limit).map(\.id)
                        let explain = try context.explain(descriptor)
                        #expect(
                            try context.fetch(descriptor).map(\.id) == expected,
                            "\(pair.partner.unicodeScalars.map(\.value)) and \(pair.other.debugDescription), limit \(limit)\n\(explain)"
                        )
                    }
                }
            }
        }
    }

    /// What the walk relies on, checked against this Swift: between two strings of scalars below
    /// U+0300 `<` is the order of their NFC UTF-8 (their keys), and where it is not between such
    /// a string and another, the other's key is the smaller.
    @Test func swiftOrdersStringsOfLowScalarsAsTheirKeys() {
        var random = SeededGenerator(label: "string sort walks, Swift's order")
        let scalars: [Unicode.Scalar] = [
            "a", "b", "K", "k", ";", "`", "\u{0}", "\u{1}", "\u{7F}", "\u{80}", "\u{B4}", "\u{B7}", "\u{C5}", "\u{E9}",
            "\u{2B9}", "\u{2FF}", "\u{212A}", "\u{212B}", "\u{37E}", "\u{387}", "\u{1FEF}", "\u{1FFD}", "\u{374}",
            "\u{1FEE}", "\u{300}", "\u{301}", "\u{327}", "\u{340}", "\u{344}", "\u{F71}", "\u{F72}", "\u{958}",
            "\u{93C}", "\u{1100}", "\u{1161}", "\u{AC00}", "\u{2126}", "\u{3A9}", "\u{FB01}", "\u{F900}", "\u{1D15E}",
            "\u{10FFFF}",
        ]
        func randomString() -> String {
            var text = String.UnicodeScalarView()
            for _ in 0..<Int.random(in: 0...4, using: &random) { text.append(scalars.randomElement(using: &random)!) }
            return String(text)
        }
        var departures = 0
        for _ in 0..<200_000 {
            var first = randomString()
            var second = randomString()
            // Extensions of one another, where Swift departs.
            if Bool.random(using: &random) {
                second = first + randomString()
                if Bool.random(using: &random) { swap(&first, &second) }
            }
            let firstKey = Array(first._nfcCodeUnits)
            let secondKey = Array(second._nfcCodeUnits)
            guard
                (first < second) != firstKey.lexicographicallyPrecedes(secondKey)
                    || (second < first) != secondKey.lexicographicallyPrecedes(firstKey)
            else { continue }
            departures += 1
            let firstLow = IndexKey.ordersAsSwift(first)
            let secondLow = IndexKey.ordersAsSwift(second)
            let described = "\(first.unicodeScalars.map(\.value)) and \(second.unicodeScalars.map(\.value))"
            #expect(!(firstLow && secondLow), "\(described), seed \(random.seed)")
            if firstLow { #expect(secondKey.lexicographicallyPrecedes(firstKey), "\(described), seed \(random.seed)") }
            if secondLow { #expect(firstKey.lexicographicallyPrecedes(secondKey), "\(described), seed \(random.seed)") }
        }
        // The pool does reach the departures.
        #expect(departures > 0)
    }

    @Test func explainSaysTheStringsAreChecked() throws {
        let container = try saved(
            [Note(id: 1, title: "b", tag: nil, group: 0), Note(id: 2, title: "a", tag: "x", group: 0)], name: "explain")
        let context = container.mainContext
        var ascending = FetchDescriptor<Note>(sortBy: [SortDescriptor(\.title)])
        ascending.fetchLimit = 20
        let plan = try context.explain(ascending)
        #expect(plan.hasPrefix("index Note(title)"), "\(plan)")
        #expect(plan.contains("order: from the index, no sort needed"), "\(plan)")
        #expect(plan.contains("strings (title) checked as read"), "\(plan)")
        #expect(try context.fetch(ascending).map(\.id) == [2, 1])

        var descending = FetchDescriptor<Note>(sortBy: [SortDescriptor(\.title, order: .reverse)])
        descending.fetchLimit = 20
        #expect(try context.explain(descending).contains("order: sorted in memory"))
        #expect(try context.fetch(descending).map(\.id) == [1, 2])
    }
}
