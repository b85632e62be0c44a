import RillStorage

/// One record's entry in an index: the key it is stored under, and whether that key holds all of it.
///
/// The key is the record's indexed values, each long string, URL or data cut to a prefix
/// (`IndexStorage.payloadLimit`), then the identifier key. When the whole would pass LMDB's 511
/// bytes, the key keeps only the identifier's first bytes and the entry is *listed*: the stored
/// value then lists, in order, the identifier keys of every record whose entry has that key.
/// Otherwise the value is empty and the identifier is the key's suffix, as in format 1.
package struct IndexEntry: Hashable, Sendable {
    /// The longest key LMDB stores.
    package static let maxKeySize = 511
    /// The first byte of a list of identifiers.
    static let listVersion: UInt8 = 1

    /// The bytes the entry is stored under.
    package var key: [UInt8]
    /// The record's identifier key.
    package var id: [UInt8]
    /// How many of the key's bytes encode the values (the rest is the identifier, or its prefix).
    package var valuesLength: Int
    /// Some value is cut to a prefix: records with other values can share the key's values part.
    package var hasCutValue: Bool
    /// The identifier does not fit in the key whole: it is listed in the stored value.
    package var isListed: Bool

    /// The entry of the record whose values encode as `values` (with `hasCutValue` saying whether
    /// some were cut) and whose identifier key is `id`.
    init(values: consuming [UInt8], hasCutValue: Bool, id: [UInt8]) {
        let length = values.count
        valuesLength = length
        self.hasCutValue = hasCutValue
        self.id = id
        isListed = length + id.count > Self.maxKeySize
        // The values become the key's first bytes, without a copy.
        key = values
        key += isListed ? id.prefix(max(Self.maxKeySize - length, 0)) : id[...]
    }

    // MARK: - Identifier lists

    /// The identifier keys an index entry stands for: the key's suffix after its values when the
    /// stored value is empty, else the ones it lists.
    ///
    /// - Throws: `RillError(.corruptStore)` when the list is malformed.
    static func identifiers(
        key: UnsafeRawBufferPointer, valuesLength: Int, value: UnsafeRawBufferPointer, index: String
    ) throws -> [[UInt8]] {
        if value.isEmpty { return [Array(key[valuesLength...])] }
        return try list(value, index: index)
    }

    /// How many identifiers an index entry stands for, read without copying them.
    static func identifierCount(value: UnsafeRawBufferPointer, index: String) throws -> Int {
        if value.isEmpty { return 1 }
        return try list(value, index: index).count
    }

    /// The stored value listing `ids` (sorted, distinct): a version byte, then each identifier
    /// key as a two-byte big-endian length and its bytes.
    static func encodeList(_ ids: [[UInt8]]) -> [UInt8] {
        var bytes: [UInt8] = [listVersion]
        for id in ids {
            bytes.append(UInt8(id.count >> 8))
            bytes.append(UInt8(truncatingIfNeeded: id.count))
            bytes += id
        }
        return bytes
    }

    /// The identifier keys a stored list holds, in order.
    static func list(_ value: UnsafeRawBufferPointer, index: String) throws -> [[UInt8]] {
        func malformed() -> RillError {
            RillError(.corruptStore, "the index \(index) holds a malformed list of identifiers")
        }
        guard value.first == listVersion else { throw malformed() }
        var ids: [[UInt8]] = []
        var position = 1
        while position < value.count {
            guard value.count - position >= 2 else { throw malformed() }
            let length = Int(value[position]) << 8 | Int(value[position + 1])
            position += 2
            guard length > 0, value.count - position >= length else { throw malformed() }
            ids.append(Array(value[position..<position + length]))
            position += length
        }
        guard !ids.isEmpty else { throw malformed() }
        return ids
    }
}
