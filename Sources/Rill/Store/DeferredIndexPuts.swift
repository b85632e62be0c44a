import RillStorage

/// The index keys a save adds for its new records, held until the end of the save and then put
/// in each index's key order.
///
/// A load's records arrive in identifier order, but their index keys arrive in no order at all:
/// put as they come, each lands on a random page of a large B-tree, and the transaction touches
/// (copies, and finds again in its list of dirty pages) a page for nearly every key. Put in key
/// order, the keys fill one page after the next, as the records do.
///
/// Only a key that stands alone is held: a key shorter than `IndexEntry.maxKeySize`, of an index
/// that is not unique (a save reads its unique indexes as it goes), whose value is empty. Such a
/// put neither reads nor depends on anything else in the index, so holding it changes only the
/// order of the puts, unless the save later removes a key of the index: whoever removes a key
/// first puts everything held (`flush(in:)`), and so does whatever reads the indexes for other
/// reasons (the relationship rules), and the save itself before its log entry is written.
///
/// The build of an index (a new index, a rebuild) holds its keys the same way: the index is empty
/// and read by nothing until it is full.
final class DeferredIndexPuts {
    /// One index's held keys: their bytes one after the other, and for each, its first eight
    /// bytes as a big-endian number (zero-filled), its start and its length.
    private struct Held {
        let database: Database
        var bytes: [UInt8] = []
        var keys: [(prefix: UInt64, start: Int, count: Int)] = []
    }

    private var held: [Held] = []

    /// Whether no key is held.
    var isEmpty: Bool { held.allSatisfy(\.keys.isEmpty) }

    /// Holds `key` for `database`, to be put with an empty value by `flush(in:)`.
    func hold(_ key: [UInt8], for database: Database) {
        let slot: Int
        if let found = held.firstIndex(where: { $0.database == database }) {
            slot = found
        } else {
            held.append(Held(database: database))
            slot = held.count - 1
        }
        var prefix: UInt64 = 0
        for index in 0..<8 { prefix = prefix << 8 | UInt64(index < key.count ? key[index] : 0) }
        held[slot].keys.append((prefix, held[slot].bytes.count, key.count))
        held[slot].bytes.append(contentsOf: key)
    }

    /// Puts every held key with an empty value, and holds nothing after.
    func flush(in txn: WriteTransaction) throws {
        let empty = UnsafeRawBufferPointer(start: nil, count: 0)
        try drain { database, key in try txn.put(empty, for: key, in: database) }
    }

    /// Calls `body` with every held key once, each index's in LMDB's order of its keys (bytes
    /// compared as unsigned, a key before the longer keys it starts), and holds nothing after.
    func drain(_ body: (Database, UnsafeRawBufferPointer) throws -> Void) rethrows {
        for slot in held.indices where !held[slot].keys.isEmpty {
            var keys = held[slot].keys
            let bytes = held[slot].bytes
            let database = held[slot].database
            held[slot].keys = []
            held[slot].bytes = []
            try bytes.withUnsafeBytes { all in
                let base = all.baseAddress
                func key(_ entry: (prefix: UInt64, start: Int, count: Int)) -> UnsafeRawBufferPointer {
                    UnsafeRawBufferPointer(start: base.map { $0 + entry.start }, count: entry.count)
                }
                keys.sort { left, right in
                    if left.prefix != right.prefix { return left.prefix < right.prefix }
                    return key(left).lexicographicallyPrecedes(key(right))
                }
                var previous: (prefix: UInt64, start: Int, count: Int)?
                for entry in keys {
                    // The same key twice (one record inserted twice in a save): once.
                    if let previous, previous.prefix == entry.prefix, key(previous).elementsEqual(key(entry)) {
                        continue
                    }
                    try body(database, key(entry))
                    previous = entry
                }
            }
        }
    }
}
