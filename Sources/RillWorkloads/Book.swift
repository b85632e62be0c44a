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
