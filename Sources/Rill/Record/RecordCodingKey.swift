/// A coding key made up at run time: the position of an element in an unkeyed container, or `super`.
///
/// Index keys are named `Index N`, the convention Foundation's coders use, so error paths read the same whichever
/// coder produced them. The name is built only when asked for: index keys are created for every element of an
/// unkeyed container but their names are needed only to report errors.
struct RecordCodingKey: CodingKey, Sendable {
    private enum Storage: Sendable {
        case name(String)
        case index(Int)
    }

    private let storage: Storage

    init(stringValue: String) {
        storage = .name(stringValue)
    }

    init(intValue: Int) {
        storage = .index(intValue)
    }

    var stringValue: String {
        switch storage {
        case .name(let name): name
        case .index(let index): Self.indexName(index)
        }
    }

    var intValue: Int? {
        switch storage {
        case .name: nil
        case .index(let index): index
        }
    }

    /// Stands in for "no key" where coding functions take a generic key: the value being coded is the one the
    /// encoder or decoder itself stands for, as in a single-value container. Generic keys avoid building an
    /// existential for every field; the key is only looked at to report errors.
    struct Absent: CodingKey, Sendable {
        var stringValue: String { "" }
        var intValue: Int? { nil }
        init() {}
        init?(stringValue: String) { nil }
        init?(intValue: Int) { nil }
    }

    /// The key to pass when there is none.
    static let absent = Absent()

    /// `key` as an optional existential, nil for `Absent`.
    static func optional<K: CodingKey>(_ key: K) -> (any CodingKey)? {
        K.self == Absent.self ? nil : key
    }

    /// The key under which `superEncoder()` / `superDecoder()` store the superclass's data.
    static let superKey = RecordCodingKey(stringValue: "super")

    /// The string form of an index key.
    static func indexName(_ index: Int) -> String {
        "Index \(index)"
    }
}
