import Rill

/// The model of the store-operations target: few identifiers, small values, so that random
/// operations often hit the same records and tie on sort keys; `group` is indexed, so that
/// queries on it use the index.
struct FuzzItem: PersistentModel, Equatable {
    static let indexes = [ModelIndex<FuzzItem>(\.group)]

    var id: Int
    var group: Int
    var score: Int
    var name: String
}
