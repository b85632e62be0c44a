/// An error raised while turning a value into an index key, or while reading bytes that are not a well-formed key.
///
/// Two situations produce it: a value that has no key encoding (an array or a map, or a decimal whose text is not a
/// number), which has no `offset`; and key bytes that `IndexKey.decode(_:offset:)` rejects, which carry the byte
/// offset at which reading failed. Equality compares the message and the offset, so tests can match exact errors.
package struct IndexKeyError: Error, Hashable, Sendable, CustomStringConvertible {
    /// Human-readable detail, without the offset.
    package var message: String
    /// For malformed key bytes, the offset of the byte at which reading failed; nil for values that cannot be keys.
    package var offset: Int?

    /// Creates an error; pass `offset` only for malformed key bytes.
    package init(_ message: String, offset: Int? = nil) {
        self.message = message
        self.offset = offset
    }

    /// The message alone for values that cannot be keys, `malformed index key at byte N: …` for bad key bytes.
    package var description: String {
        guard let offset else { return message }
        return "malformed index key at byte \(offset): \(message)"
    }

    /// The error for a value that has no index key encoding.
    package static func unindexable(_ message: String) -> IndexKeyError {
        IndexKeyError(message)
    }

    /// The error for key bytes that are not a canonical encoding, found at byte `offset`.
    package static func malformed(at offset: Int, _ message: String) -> IndexKeyError {
        IndexKeyError(message, offset: offset)
    }
}
