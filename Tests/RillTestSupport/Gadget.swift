import Foundation
import Rill
import RillWorkloads

/// A model with every kind of field the query tests need: optionals, accented and mixed-case
/// strings, dates, a nested struct and an array.
public struct Gadget: PersistentModel, Equatable {
    public struct Spec: Codable, Sendable, Equatable {
        public var weight: Int
        public var color: String

        public init(weight: Int, color: String) {
            self.weight = weight
            self.color = color
        }
    }

    public var id: Int
    public var name: String
    public var maker: String?
    public var price: Double
    public var stock: Int
    public var rating: Double?
    public var tags: [String]
    public var released: Date
    public var active: Bool
    public var spec: Spec

    public static let indexes: [ModelIndex<Gadget>] = [
        ModelIndex(\.stock), ModelIndex(\.price), ModelIndex(\.released), ModelIndex(\.maker, \.stock),
        ModelIndex(\.active), ModelIndex(\.spec.weight), ModelIndex(\.rating),
    ]

    public init(
        id: Int, name: String, maker: String?, price: Double, stock: Int, rating: Double?, tags: [String],
        released: Date, active: Bool, spec: Spec
    ) {
        self.id = id
        self.name = name
        self.maker = maker
        self.price = price
        self.stock = stock
        self.rating = rating
        self.tags = tags
        self.released = released
        self.active = active
        self.spec = spec
    }

    /// A random gadget; names mix case and accents so that case- and diacritic-insensitive tests matter.
    public static func random(id: Int, using random: inout SeededGenerator) -> Gadget {
        let syllables = ["ca", "fé", "Ca", "FÉ", "mo", "Mö", "ré", "Re", "xy", "Zü", "na", "ñu"]
        func word() -> String {
            (0..<Int.random(in: 1...3, using: &random)).map { _ in syllables.randomElement(using: &random)! }.joined()
        }
        return Gadget(
            id: id,
            name: word() + (Bool.random(using: &random) ? " " + word() : ""),
            maker: Int.random(in: 0..<4, using: &random) == 0
                ? nil : ["Acme", "acmé", "Bolt", "Çelik"].randomElement(using: &random)!,
            price: Double(Int.random(in: -500...50_000, using: &random)) / 100,
            stock: Int.random(in: -5...200, using: &random),
            rating: Bool.random(using: &random) ? Double(Int.random(in: 0...50, using: &random)) / 10 : nil,
            tags: (0..<Int.random(in: 0...3, using: &random)).map { _ in
                ["new", "sale", "Eco", "éco", "x"].randomElement(using: &random)!
            },
            released: Date(
                timeIntervalSince1970: Double(Int.random(in: 1_600_000_000...1_800_000_000, using: &random))),
            active: Bool.random(using: &random),
            spec: Spec(
                weight: Int.random(in: 0...1000, using: &random),
                color: ["red", "Red", "blue", "vért"].randomElement(using: &random)!)
        )
    }
}
