import Rill

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
