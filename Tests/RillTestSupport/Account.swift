import Rill

/// A model with a unique field (an upsert by `email`), and an optional field of no constraint.
public struct Account: PersistentModel, Equatable {
    public var id: Int
    public var email: String
    public var name: String
    public var handle: String?

    public static let indexes: [ModelIndex<Account>] = [.unique(\.email)]

    public init(id: Int, email: String, name: String, handle: String? = nil) {
        self.id = id
        self.email = email
        self.name = name
        self.handle = handle
    }
}
