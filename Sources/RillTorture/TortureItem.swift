import Rill

/// The record the suites' writers save: which writer made it, its number among that writer's
/// saves, and a payload of chosen size; indexed by writer and by number, so that every fault
/// also hits index maintenance.
package struct TortureItem: PersistentModel, Equatable {
    package static let indexes = [ModelIndex<TortureItem>(\.writer), ModelIndex(\.number)]

    package var id: String
    package var writer: Int
    package var number: Int
    package var payload: String

    package init(id: String, writer: Int, number: Int, payload: String) {
        self.id = id
        self.writer = writer
        self.number = number
        self.payload = payload
    }
}
