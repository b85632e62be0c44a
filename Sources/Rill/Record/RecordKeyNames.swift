/// The names of a record's top-level keys, by their place in the record, for parsing more
/// records like it: the records of one entity mostly store the same keys in the same order, so
/// each key's `String` is made (and its UTF-8 checked) once for a run of records rather than once
/// a record.
///
/// A key is taken from here only when its bytes are those of the name at its place, so the name
/// is the one the bytes spell. Keys of more than 16 bytes are made every time.
package final class RecordKeyNames: Sendable {
    /// The names' bytes (`InlineKey`), up to the first name of more than 16 bytes.
    private let keys: [InlineKey]
    private let names: [String]
    /// How many keys the record they were taken from had.
    let fieldCount: Int

    /// The names of `record`'s top-level keys; nil when it is not a map.
    package init?(of record: RecordValue) {
        guard case .map(let fields) = record else { return nil }
        var keys: [InlineKey] = []
        var names: [String] = []
        keys.reserveCapacity(fields.count)
        names.reserveCapacity(fields.count)
        for field in fields {
            var name = field.name
            let key = name.withUTF8 { InlineKey(UnsafeRawBufferPointer($0)) }
            guard key.isHeld else { break }
            keys.append(key)
            names.append(field.name)
        }
        self.keys = keys
        self.names = names
        fieldCount = fields.count
    }

    /// The name of the key whose UTF-8 is at `range` of `reader`'s record, the `ordinal`-th key
    /// of its map.
    @inline(__always)
    func name(of range: Range<Int>, at ordinal: Int, in reader: RecordReader) throws(RecordError) -> String {
        if ordinal < keys.count, keys[ordinal] == InlineKey(UnsafeRawBufferPointer(rebasing: reader.bytes[range])) {
            return names[ordinal]
        }
        return try reader.string(in: range)
    }
}
