import Foundation

enum PredicateGenre: String, Codable, Sendable, CaseIterable {
    case fiction
    case poetry
    case essay
}

struct PredicatePlace: Codable, Sendable, Equatable {
    var city: String
    var zip: Int?
}

struct PredicateIngredient: Codable, Sendable {
    var name: String
    var grams: Int
    var labels: [String]
}

/// The model the predicate translation tests query.
struct PredicateBook: Codable, Sendable {
    var title: String
    var content: String
    var subtitle: String?
    var pages: Int
    var copies: UInt
    var price: Double
    var rating: Double?
    var isRead: Bool
    var addedAt: Date
    var plannedDate: Date?
    var id: UUID
    var genre: PredicateGenre
    var place: PredicatePlace
    var ingredients: [PredicateIngredient]
    var tags: [String]

    var displayTitle: String { title.uppercased() }
}
