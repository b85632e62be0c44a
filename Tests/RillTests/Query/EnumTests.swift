import Foundation
import RillTestSupport
import RillWorkloads
import Testing

@testable import Rill

/// Enums in models: a raw-value enum is stored as its raw value, and filtered and sorted by it;
/// an enum with associated values is stored as the structure Codable gives it.
@Suite struct EnumTests {
    let directory = TemporaryDirectory()

    enum Priority: Int, Codable, Sendable, CaseIterable, Comparable {
        case low = 1, medium, high
        static func < (lhs: Priority, rhs: Priority) -> Bool { lhs.rawValue < rhs.rawValue }
    }

    enum Status: String, Codable, Sendable, CaseIterable { case open, done, archived }

    enum Due: Codable, Sendable, Equatable {
        case none
        case on(Date)
        case every(days: Int)
    }

    struct Task: PersistentModel, Equatable {
        var id: Int
        var title: String
        var priority: Priority
        var status: Status
        var due: Due
        static let indexes: [ModelIndex<Task>] = [ModelIndex(\.status)]
    }

    struct Ticket: PersistentModel {
        var id: Int
        var priority: Priority
        var status: Status
    }

    @Test func rawValueEnumsAreStoredFilteredAndSortedByTheirRawValue() throws {
        var random = SeededGenerator(label: "enums")
        let container = try ModelContainer(
            for: Task.self, configurations: ModelConfiguration(url: directory.url.appendingPathComponent("store")))
        let context = container.mainContext
        var tasks: [Task] = []
        for id in 0..<200 {
            let task = Task(
                id: id, title: "t\(id)", priority: Priority.allCases.randomElement(using: &random)!,
                status: Status.allCases.randomElement(using: &random)!,
                due: [Due.none, .on(Date(timeIntervalSince1970: Double(id))), .every(days: id % 7)].randomElement(
                    using: &random)!)
            tasks.append(task)
            context.insert(task)
        }
        try context.save()
        #expect(try context.fetch(FetchDescriptor<Task>(sortBy: [SortDescriptor(\.id)])) == tasks)

        // The idiom that compiles on Linux: the case in a constant outside the predicate.
        let done = Status.done
        let byStatus = FetchDescriptor<Task>(
            predicate: #Predicate { $0.status == done }, sortBy: [SortDescriptor(\.id)])
        #expect(try context.fetch(byStatus) == tasks.filter { $0.status == .done })
        let plan = try context.explain(byStatus)
        #expect(plan.contains("index Task(status)"), "\(plan)")
        // Or its raw value.
        let high = Priority.high.rawValue
        let byRaw = FetchDescriptor<Task>(
            predicate: #Predicate { $0.priority.rawValue >= high }, sortBy: [SortDescriptor(\.id)])
        #expect(try context.fetch(byRaw) == tasks.filter { $0.priority == .high })
        // Sorted by the raw value, ties by identifier.
        let sorted = FetchDescriptor<Task>(
            sortBy: [SortDescriptor(\.priority.rawValue, order: .reverse), SortDescriptor(\.id)])
        #expect(
            try context.fetch(sorted)
                == tasks.sorted { ($0.priority.rawValue, -$0.id) > ($1.priority.rawValue, -$1.id) })
        // The text language sees the raw values.
        let rows = try container.store.run(try QueryParser.parse(#"Task where status == "archived" and priority == 3"#))
        #expect(rows.count == tasks.filter { $0.status == .archived && $0.priority == .high }.count)
        // A live query follows an enum field.
        let live = try LiveQuery(byStatus, in: container)
        context.insert(Task(id: 0, title: "t0", priority: .low, status: .done, due: .none))
        try context.save()
        try live.catchUp()
        #expect(Array(live) == (try context.fetch(byStatus)))
        // An enum with associated values is stored as Codable's structure: read back whole.
        #expect(try context.model(Task.self, id: 1)?.due == tasks[1].due)
        // An enum with associated values cannot be probed (its decoding asks which case the
        // record holds): the model registers no schema, and is stored and read as always.
        #expect(try container.store.schema(of: "Task") == nil)
        // Without one, the schema says what a raw value is stored as.
        let probed = try #require(ModelSchemaProbe.schema(of: Ticket.self))
        #expect(probed.kinds.jsonString() == #"{"id":"int","priority":"int","status":"string"}"#)
    }
}

/// A raw-value enum is indexed by its raw value once it says it is an indexable value.
extension EnumTests.Status: IndexableValue {}
