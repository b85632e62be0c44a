import Foundation
import Rill

/// A book of a small library: the model of the demo and of many tests.
public struct Book: PersistentModel, Equatable {
    public var id: UUID
    public var title: String
    public var author: String
    public var pages: Int
    public var isRead: Bool
    public var addedAt: Date
    public var rating: Double?

    public init(
        id: UUID = UUID(), title: String, author: String, pages: Int = 100, isRead: Bool = false,
        addedAt: Date = Date(timeIntervalSince1970: 1_700_000_000), rating: Double? = nil
    ) {
        self.id = id
        self.title = title
        self.author = author
        self.pages = pages
        self.isRead = isRead
        self.addedAt = addedAt
        self.rating = rating
    }
}

/// A model identified by a string.
public struct Author: PersistentModel, Equatable {
    public var id: String
    public var name: String
    public var born: Int?

    public init(id: String, name: String, born: Int? = nil) {
        self.id = id
        self.name = name
        self.born = born
    }
}

/// A model identified by an integer, with a payload of any size (crash and growth tests).
public struct Counter: PersistentModel, Equatable {
    public var id: Int
    public var value: Int
    public var payload: String

    public init(id: Int, value: Int, payload: String = "") {
        self.id = id
        self.value = value
        self.payload = payload
    }
}

/// A model whose encoding fails on demand (atomicity tests).
public struct Fragile: PersistentModel, Equatable {
    public struct Refused: Error {}

    public var id: Int
    public var fails: Bool

    public init(id: Int, fails: Bool) {
        self.id = id
        self.fails = fails
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(id, forKey: .id)
        if fails {
            throw EncodingError.invalidValue(
                fails, .init(codingPath: [CodingKeys.fails], debugDescription: "this model refuses to be encoded"))
        }
        try container.encode(fails, forKey: .fails)
    }
}
