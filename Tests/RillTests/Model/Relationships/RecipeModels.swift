import Foundation

@testable import Rill

/// Models related to one another: recipes with ingredients (one-to-many, the inverse cascading),
/// ingredients with notes (a required reference, the inverse cascading), recipes with tags
/// (many-to-many, nullified), chefs who deny deleting them while they have recipes, and reviews
/// that require their recipe without an inverse.
struct Recipe: PersistentModel, Equatable {
    var id = UUID()
    var name: String
    var minutes = 10
    var ingredients = Related<Ingredient>()
    var tags: [Reference<Tag>] = []
    var chef: Reference<Chef>?

    static let relationships: [ModelRelationship<Recipe>] = [
        .inverse(\.ingredients, of: \Ingredient.recipe, deleteRule: .cascade),
        .references(\.tags),
        .reference(\.chef),
    ]
}

struct Ingredient: PersistentModel, Equatable {
    var id = UUID()
    var name: String
    var grams = 100
    var recipe: Reference<Recipe>?
    var notes = Related<Note>()

    static let indexes: [ModelIndex<Ingredient>] = [ModelIndex(\.recipe)]
    static let relationships: [ModelRelationship<Ingredient>] = [
        .reference(\.recipe),
        .inverse(\.notes, of: \Note.ingredient, deleteRule: .cascade),
    ]
}

struct Note: PersistentModel, Equatable {
    var id = UUID()
    var text: String
    var ingredient: Reference<Ingredient>

    static let relationships: [ModelRelationship<Note>] = [.reference(\.ingredient)]
}

struct Tag: PersistentModel, Equatable {
    var id: String
    var recipes = Related<Recipe>()

    static let relationships: [ModelRelationship<Tag>] = [.inverse(\.recipes, of: \Recipe.tags)]
}

struct Chef: PersistentModel, Equatable {
    var id: Int
    var name: String
    var recipes = Related<Recipe>()

    static let relationships: [ModelRelationship<Chef>] = [
        .inverse(\.recipes, of: \Recipe.chef, deleteRule: .deny)
    ]
}

struct Review: PersistentModel, Equatable {
    var id = UUID()
    var stars: Int
    var recipe: Reference<Recipe>

    static let relationships: [ModelRelationship<Review>] = [.reference(\.recipe)]
}

let recipeModelTypes: [any PersistentModel.Type] = [
    Recipe.self, Ingredient.self, Note.self, Tag.self, Chef.self, Review.self,
]
