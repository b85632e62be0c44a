/// The keys of the store's reference index (the `references` database): one entry for each
/// reference a stored record holds, keyed target first, so that one range finds every record that
/// references a given one.
///
/// A key is the target entity's name and the target's identifier key, then the referencing
/// entity's name, its field and the referencing record's identifier key. Names are preceded by
/// their length in one byte, identifier keys by theirs in two; the value is empty.
package enum ReferenceKey {
    /// The prefix every entry of references to one record shares.
    static func prefix(target: String, key: [UInt8]) throws -> [UInt8] {
        var bytes: [UInt8] = []
        try appendName(target, to: &bytes)
        appendKey(key, to: &bytes)
        return bytes
    }

    /// The entry of `source`'s record `sourceKey` referencing `target`'s record `targetKey` through `field`.
    static func make(
        target: String, targetKey: [UInt8], source: String, field: String, sourceKey: [UInt8]
    ) throws -> [UInt8] {
        var bytes = try prefix(target: target, key: targetKey)
        try appendName(source, to: &bytes)
        try appendName(field, to: &bytes)
        bytes += sourceKey
        guard bytes.count <= IndexEntry.maxKeySize else {
            throw RillError(
                .invalidRecord,
                "a reference of \(source).\(field) to \(target) makes an index key longer than 511 bytes; "
                    + "use shorter identifiers or names")
        }
        return bytes
    }

    /// The referencing entity, field and identifier key of an entry, from the bytes after its prefix.
    static func referrer(_ rest: UnsafeRawBufferPointer) -> (entity: String, field: String, key: [UInt8])? {
        var position = 0
        func name() -> String? {
            guard position < rest.count else { return nil }
            let length = Int(rest[position])
            guard rest.count - position - 1 >= length else { return nil }
            defer { position += 1 + length }
            return String(decoding: rest[(position + 1)..<(position + 1 + length)], as: UTF8.self)
        }
        guard let entity = name(), let field = name(), position < rest.count else { return nil }
        return (entity, field, Array(rest[position...]))
    }

    private static func appendName(_ name: String, to bytes: inout [UInt8]) throws {
        let utf8 = Array(name.utf8)
        guard utf8.count < 256 else {
            throw RillError(
                .invalidConfiguration, "the name \(name) is too long for a relationship (255 bytes at most)")
        }
        bytes.append(UInt8(utf8.count))
        bytes += utf8
    }

    private static func appendKey(_ key: [UInt8], to bytes: inout [UInt8]) {
        bytes.append(UInt8(truncatingIfNeeded: key.count >> 8))
        bytes.append(UInt8(truncatingIfNeeded: key.count))
        bytes += key
    }
}
