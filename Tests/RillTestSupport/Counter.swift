import Rill

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
