/// Collections whose `encode(to:)` writes their elements in an iteration order that is no part of
/// their value (it follows the hash table, and differs between equal values and between runs of a
/// process): the encoder sorts what they wrote by its bytes (`RecordSink.sortEntries`), so that
/// equal values are stored as equal bytes. A save compares a record's bytes with the stored ones
/// to leave an unchanged record unrecorded, and live queries and history compare them to tell
/// what changed.
protocol UnorderedElementsEncoding {}

/// `UnorderedElementsEncoding` of a collection of keys and values (stored as a map, or as an array
/// of key, value, key, value…): its entries are sorted by their keys.
protocol UnorderedEntriesEncoding {}

extension Set: UnorderedElementsEncoding {}

extension Dictionary: UnorderedEntriesEncoding {}

extension RecordFormat {
    /// How the bytes a value of `type` writes through `encode(to:)` are put in order: nil when the
    /// order it writes is its value's; true when they are pairs of key and value (a dictionary),
    /// false when they are single elements (a set).
    static func unorderedPairs<T>(_ type: T.Type) -> Bool? {
        if type is any UnorderedEntriesEncoding.Type { return true }
        if type is any UnorderedElementsEncoding.Type { return false }
        return nil
    }
}
