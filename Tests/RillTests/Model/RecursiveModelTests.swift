import Foundation
import RillTestSupport
import Testing

@testable import Rill

/// Models holding a type that holds itself (a thread of replies, a linked list in a class) open,
/// save, fetch and filter as any other: the schema probe stops at its depth limit.
@Suite struct RecursiveModelTests {
    let directory = TemporaryDirectory()

    struct Comment: Codable, Sendable, Equatable {
        var text: String
        var replies: [Comment]
    }

    final class Link: Codable, @unchecked Sendable, Equatable {
        let value: Int
        let next: Link?
        init(_ value: Int, next: Link?) {
            self.value = value
            self.next = next
        }
        static func == (lhs: Link, rhs: Link) -> Bool { lhs.value == rhs.value && lhs.next == rhs.next }
    }

    struct Discussion: PersistentModel, Equatable {
        var id: Int
        var title: String
        var root: Comment
        var chain: Link?
    }

    @Test func modelsHoldingRecursiveTypesWork() throws {
        let container = try ModelContainer(
            for: Discussion.self,
            configurations: ModelConfiguration(url: directory.url.appendingPathComponent("store")))
        let context = container.mainContext
        let deep = (0..<40).reduce(Comment(text: "leaf", replies: [])) { inner, level in
            Comment(text: "level \(level)", replies: [inner, Comment(text: "aside", replies: [])])
        }
        let discussions = [
            Discussion(id: 1, title: "deep", root: deep, chain: Link(1, next: Link(2, next: Link(3, next: nil)))),
            Discussion(id: 2, title: "flat", root: Comment(text: "hi", replies: []), chain: nil),
        ]
        for discussion in discussions { context.insert(discussion) }
        try context.save()
        #expect(try context.fetch(FetchDescriptor<Discussion>(sortBy: [SortDescriptor(\.id)])) == discussions)
        let flat = FetchDescriptor<Discussion>(predicate: #Predicate { $0.root.replies.isEmpty })
        #expect(try context.fetch(flat).map(\.id) == [2])
        let titled = FetchDescriptor<Discussion>(predicate: #Predicate { $0.root.text == "level 39" })
        #expect(try context.fetch(titled).map(\.id) == [1])
        #expect(KeyPathNames.names(of: \Discussion.root.text, root: Discussion.self) == ["root", "text"])
        #expect(ModelSchemaProbe.schema(of: Discussion.self) != nil)
        #expect(DistinctProbeDecoder.value(of: Discussion.self, base: 1_000_003) != nil)
    }
}
