/// A row that may have entered, left or moved within a live query's window.
struct WindowCandidate {
    var oldOffset: Int?
    var newOffset: Int?
    var old: LiveEntry?
    var new: LiveEntry?
    var touched: Bool
}

/// Values by record key for the few rows one commit's window change weighs: the rows it
/// touched and the rows at the edges of the windows (as many at each edge as rows touched,
/// plus one).
///
/// A list searched in order while it is short, as it is for the usual commit of a row or two:
/// comparing a few keys' bytes costs less than hashing one of them into a `Dictionary`, which
/// it becomes beyond `listLimit` entries.
struct SmallKeyedTable<Value> {
    static var listLimit: Int { 16 }

    private var keys: [[UInt8]] = []
    private(set) var values: [Value] = []
    /// Each key's index in `keys` and `values`, once there are more than `listLimit`.
    private var indices: [RecordKey: Int]?

    /// A table with room for `capacity` entries before it grows.
    init(capacity: Int) {
        keys.reserveCapacity(min(capacity, Self.listLimit))
        values.reserveCapacity(min(capacity, Self.listLimit))
    }

    var count: Int { keys.count }

    /// The index of `key`'s entry, nil when it has none.
    func index(of key: [UInt8]) -> Int? {
        if let indices { return indices[RecordKey(key)] }
        return keys.firstIndex(of: key)
    }

    func contains(_ key: [UInt8]) -> Bool { index(of: key) != nil }

    subscript(key: [UInt8]) -> Value? { index(of: key).map { values[$0] } }

    /// Sets `key`'s value, adding the entry when the key has none.
    mutating func set(_ value: Value, for key: [UInt8]) {
        if let index = index(of: key) {
            values[index] = value
            return
        }
        keys.append(key)
        values.append(value)
        if indices != nil {
            indices![RecordKey(key)] = keys.count - 1
        } else if keys.count > Self.listLimit {
            indices = Dictionary(uniqueKeysWithValues: keys.enumerated().map { (RecordKey($0.element), $0.offset) })
        }
    }

    /// The keys, in the order they were added.
    var orderedKeys: [[UInt8]] { keys }
}
