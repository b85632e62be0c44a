import Rill

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
