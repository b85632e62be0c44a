import Foundation
import RillTestSupport
import Testing

@testable import Rill

/// A model that refers to models of its own type (a tree of categories, each with its parent and
/// its children), and two types that refer to each other: declared, saved, read through.
@Suite struct SelfReferenceTests {
    let directory = TemporaryDirectory()

    struct Category: PersistentModel, Equatable {
        var id: Int
        var name: String
        var parent: Reference<Category>?
        var children = Related<Category>()

        static let relationships: [ModelRelationship<Category>] = [
            .reference(\.parent),
            .inverse(\.children, of: \Category.parent, deleteRule: .cascade),
        ]
    }

    struct Employee: PersistentModel, Equatable {
        var id: Int
        var name: String
        var team: Reference<Team>?
        static let relationships: [ModelRelationship<Employee>] = [.reference(\.team)]
    }

    struct Team: PersistentModel, Equatable {
        var id: Int
        var lead: Reference<Employee>?
        static let relationships: [ModelRelationship<Team>] = [.reference(\.lead)]
    }

    @Test func aModelRefersToItsOwnType() throws {
        let container = try ModelContainer(
            for: Category.self, Employee.self, Team.self,
            configurations: ModelConfiguration(url: directory.url.appendingPathComponent("store")))
        let context = container.mainContext
        context.insert(Category(id: 1, name: "root"))
        context.insert(Category(id: 2, name: "fruit", parent: Reference(1)))
        context.insert(Category(id: 3, name: "apples", parent: Reference(2)))
        context.insert(Category(id: 4, name: "tools", parent: Reference(1)))
        try context.save()

        let root = "root"
        let underRoot = FetchDescriptor<Category>(
            predicate: #Predicate { $0.parent?.model?.name == root }, sortBy: [SortDescriptor(\.id)])
        #expect(try context.fetch(underRoot).map(\.id) == [2, 4])
        var withParents = FetchDescriptor<Category>(sortBy: [SortDescriptor(\.id)])
        withParents.relationshipKeyPathsForPrefetching = [\Category.parent, \Category.children]
        let fetched = try context.fetch(withParents)
        #expect(fetched.map { $0.parent?.model?.name } == [nil, "root", "fruit", "root"])
        #expect(fetched[0].children.map(\.id).sorted() == [2, 4])

        // Deleting a category deletes its subtree (the inverse cascades).
        context.delete(fetched[1])
        try context.save()
        #expect(try context.fetch(FetchDescriptor<Category>(sortBy: [SortDescriptor(\.id)])).map(\.id) == [1, 4])

        context.insert(Team(id: 1, lead: Reference(7)))
        context.insert(Employee(id: 7, name: "Ada", team: Reference(1)))
        try context.save()
        var teams = FetchDescriptor<Team>()
        teams.relationshipKeyPathsForPrefetching = [\Team.lead]
        #expect(try context.fetch(teams).first?.lead?.model?.name == "Ada")
    }
}
