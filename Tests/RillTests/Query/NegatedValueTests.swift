import Foundation
import RillTestSupport
import RillWorkloads
import Testing

@testable import Rill

/// A negated captured number (`$0.balance < -limit`, `$0.balance > -100`) is one literal: an
/// index serves the comparison, and the answers are Swift's.
@Suite struct NegatedValueTests {
    let directory = TemporaryDirectory()

    struct Account: PersistentModel {
        var id: Int
        var balance: Int
        var rate: Double
        static let indexes: [ModelIndex<Account>] = [ModelIndex(\.balance), ModelIndex(\.rate)]
    }

    @Test func negatedValuesAreServedByIndexes() throws {
        var random = SeededGenerator(label: "negated values")
        let container = try ModelContainer(
            for: Account.self, configurations: ModelConfiguration(url: directory.url.appendingPathComponent("store")))
        let context = container.mainContext
        var accounts: [Account] = []
        for id in 0..<300 {
            let extreme = [Int.min, Int.min + 1, Int.max, 0, -1][id % 5]
            let balance = id < 10 ? extreme : Int.random(in: -500...500, using: &random)
            let rate =
                id < 10 ? [-0.0, .infinity, -.infinity, .nan, 0][id % 5] : Double.random(in: -5...5, using: &random)
            let account = Account(id: id, balance: balance, rate: rate)
            accounts.append(account)
            context.insert(account)
        }
        try context.save()

        for _ in 0..<50 {
            let limit = Int.random(in: -600...600, using: &random)
            let bound = Double.random(in: -6...6, using: &random)
            let byBalance = FetchDescriptor<Account>(
                predicate: #Predicate { $0.balance < -limit }, sortBy: [SortDescriptor(\.id)])
            #expect(try context.fetch(byBalance).map(\.id) == accounts.filter { $0.balance < -limit }.map(\.id))
            #expect(try context.explain(byBalance).contains("index Account(balance)"))
            let byRate = FetchDescriptor<Account>(
                predicate: #Predicate { $0.rate >= -bound && $0.balance > -100 }, sortBy: [SortDescriptor(\.id)])
            #expect(
                try context.fetch(byRate).map(\.id)
                    == accounts.filter { $0.rate >= -bound && $0.balance > -100 }.map(\.id))
            let plan = try context.explain(byRate)
            #expect(plan.contains("index Account("), "\(plan)")
        }
        // The negation of Int.min overflows: left to the evaluation, which refuses it as Swift
        // would trap, or answers without crashing.
        let smallest = Int.min
        let overflow = FetchDescriptor<Account>(predicate: #Predicate { $0.balance > -smallest })
        _ = try? context.fetch(overflow)
    }
}
