import Rill

/// The records the cluster suite's nodes save, without a model type (a node's store is opened on
/// the replicated log at the package level): `ClusterItem`, string identifiers from a space all
/// nodes share, so that they update and delete one another's records.
///
/// Fields: `writer` (the node that saved it), `number` (a bucket, then a part no other save
/// repeats: node, incarnation, counter), `tag` (a few values) and `slot`, unique across the
/// records (`.fail`): two nodes taking one slot at once conflict, and the one that loses the race
/// fails typed once it has applied the winner's commit.
package enum ClusterItem {
    package static let entity = "ClusterItem"
    package static let writers = 3
    package static let tags = ["red", "green", "blue", "gold"]
    /// Buckets of numbers that the range queries select.
    package static let buckets = 100
    package static let bucketSize = 1_000_000_000
    /// How many identifiers and slots there are.
    package static let identifiers = 240
    package static let slots = 1200

    /// Declares the entity in `store`, with its indexes and its unique slot.
    package static func register(in store: Store) throws {
        _ = try store.registerEntity(
            named: entity, identifierKind: .string, indexes: [[["writer"]], [["number"]], [["tag"]], [["slot"]]],
            uniqueness: ["slot": .fail])
    }

    /// The number of a save: `bucket`, then `unique`, which no other save of the run repeats.
    package static func number(bucket: Int, unique: Int) -> Int {
        precondition(unique < bucketSize, "a save's own part of its number fits below the bucket size")
        return bucket * bucketSize + unique
    }

    /// The part of a number no other save repeats, for save `counter` of `incarnation` of `node`.
    package static func unique(node: Int, incarnation: Int, counter: Int) -> Int {
        precondition(counter < 1_000_000 && incarnation < 100, "the unique part of a number overflows")
        return node * 100_000_000 + incarnation * 1_000_000 + counter
    }

    /// The record stored under `key`, as the oracle reads it; nil for a key or record of another shape.
    package static func item(key: [UInt8], record: [UInt8]) throws -> ClusterQuery.Item? {
        guard let id = id(key) else { return nil }
        let value = try record.withUnsafeBytes { try RecordValue(record: $0) }
        guard case .map(let fields) = value else { return nil }
        var writer: Int?
        var number: Int?
        var tag: String?
        for field in fields {
            switch (field.name, field.value) {
            case ("writer", .int(let value)): writer = Int(value)
            case ("writer", .uint(let value)): writer = Int(value)
            case ("number", .int(let value)): number = Int(value)
            case ("number", .uint(let value)): number = Int(value)
            case ("tag", .string(let value)): tag = value
            default: break
            }
        }
        guard let writer, let number, let tag else { return nil }
        return ClusterQuery.Item(id: id, writer: writer, number: number, tag: tag)
    }

    /// The identifier whose storage key is `key`; nil for a key of another kind.
    package static func id(_ key: [UInt8]) -> String? {
        guard case .string(let id)? = key.withUnsafeBytes({ AnyIdentifier(storageKey: $0) }) else { return nil }
        return id
    }

    /// The storage key of identifier `id`.
    package static func key(_ id: String) -> [UInt8] { AnyIdentifier.string(id).storageKey }
}
