import Foundation
import Rill
import RillWorkloads

/// A family of three kinds for the hierarchy tests: what every dish has, and each kind's own fields.
protocol Dish: PersistentModel where ID == Int {
    var name: String { get }
    var rating: Int { get }
    /// Computed in every kind, from a stored field in two of them only: never translated.
    var summary: String { get }
    /// One more than the rating, computed in every kind: a field plus a constant, never taken
    /// for another field.
    var code: Int { get }
}

extension Dish {
    var code: Int { rating + 1 }
}

/// A protocol two of the kinds conform to: `$0 is any Warm` holds for their records.
protocol Warm {
    var minutes: Int { get }
}

extension Dish {
    static var family: ModelFamily? { .dishes }
}

extension ModelFamily {
    static let dishes = ModelFamily(of: (any Dish).self, entityName: "Dish", kinds: Cake.self, Drink.self, Soup.self)
}

struct Cake: Dish, Warm, Equatable {
    var id: Int
    var name: String
    var rating: Int
    var minutes: Int
    var tags: [String]
    var summary: String { name }

    static let indexes: [ModelIndex<Cake>] = [ModelIndex(\.minutes), ModelIndex(\.rating)]
}

struct Drink: Dish, Equatable {
    var id: Int
    var name: String
    var rating: Int
    var caffeinated: Bool
    var volume: Double?
    var summary: String { name }

    static let indexes: [ModelIndex<Drink>] = [ModelIndex(\.rating)]
}

struct Soup: Dish, Warm, Equatable {
    var id: Int
    var name: String
    var rating: Int
    var minutes: Int
    var spicy: Bool
    var summary: String { "soup " + name }
}

enum Dishes {
    static let names = ["Tea", "tart", "Miso", "bun", "Chai", "stew", "Pho", "Ale"]

    static func random(id: Int, using random: inout SeededGenerator) -> any Dish {
        let name = names.randomElement(using: &random)!
        let rating = Int.random(in: 0...9, using: &random)
        switch Int.random(in: 0..<3, using: &random) {
        case 0:
            let tags = ["sweet", "nut", "vegan"].filter { _ in Bool.random(using: &random) }
            return Cake(
                id: id, name: name, rating: rating, minutes: Int.random(in: 5...120, using: &random), tags: tags)
        case 1:
            let volume: Double? = Bool.random(using: &random) ? Double(Int.random(in: 1...9, using: &random)) / 4 : nil
            return Drink(id: id, name: name, rating: rating, caffeinated: Bool.random(using: &random), volume: volume)
        default:
            return Soup(
                id: id, name: name, rating: rating, minutes: Int.random(in: 5...120, using: &random),
                spicy: Bool.random(using: &random))
        }
    }

    /// Whether two dishes are the same kind with the same fields.
    static func same(_ lhs: any Dish, _ rhs: any Dish) -> Bool {
        switch (lhs, rhs) {
        case (let a as Cake, let b as Cake): a == b
        case (let a as Drink, let b as Drink): a == b
        case (let a as Soup, let b as Soup): a == b
        default: false
        }
    }
}
