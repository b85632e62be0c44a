import Foundation
import RillTestSupport
import Testing

@testable import Rill

/// A kind change migrated from the version before it, in a store that also holds records of an
/// older version still (a field renamed and one added since): those are read through the
/// model's evolution before they are decoded as the earlier type.
@Suite struct MigrationAfterEvolutionTests {
    let directory = TemporaryDirectory()

    struct ChoreV1: PersistentModel {
        static let entityName = "Chore"
        var id: String
        var title: String
        var priority: String
    }

    struct ChoreV2: PersistentModel {
        static let entityName = "Chore"
        var id: String
        var name: String
        var priority: String
        var rank = 3
        static let evolution = ModelEvolution<ChoreV2>(.renamed(\.name, from: "title"), .added(\.rank, default: 3))
    }

    /// What version 2 stores, as the migration reads it.
    struct ChoreV2Read: Decodable, Sendable {
        var id: String
        var name: String
        var priority: String
        var rank: Int
    }

    struct ChoreV3: PersistentModel, Equatable {
        static let entityName = "Chore"
        var id: String
        var name: String
        var priority: Int
        var rank: Int
        static let evolution = ModelEvolution<ChoreV3>(
            .renamed(\.name, from: "title"), .added(\.rank, default: 3),
            .migrated(from: ChoreV2Read.self) { old in
                ChoreV3(id: old.id, name: old.name, priority: old.priority == "high" ? 3 : 1, rank: old.rank)
            })
    }

    @Test func recordsOfEveryEarlierVersionAreMigrated() throws {
        let configuration = ModelConfiguration(url: directory.url.appendingPathComponent("store"))
        do {
            let first = try ModelContainer(for: ChoreV1.self, configurations: configuration)
            first.mainContext.insert(ChoreV1(id: "a", title: "dishes", priority: "high"))
            first.mainContext.insert(ChoreV1(id: "b", title: "laundry", priority: "low"))
            try first.mainContext.save()
        }
        do {
            let second = try ModelContainer(for: ChoreV2.self, configurations: configuration)
            second.mainContext.insert(ChoreV2(id: "c", name: "floors", priority: "high", rank: 1))
            try second.mainContext.save()
        }
        let third = try ModelContainer(for: ChoreV3.self, configurations: configuration)
        #expect(
            try third.mainContext.fetch(FetchDescriptor<ChoreV3>(sortBy: [SortDescriptor(\.id)])) == [
                ChoreV3(id: "a", name: "dishes", priority: 3, rank: 3),
                ChoreV3(id: "b", name: "laundry", priority: 1, rank: 3),
                ChoreV3(id: "c", name: "floors", priority: 3, rank: 1),
            ])
    }
}
