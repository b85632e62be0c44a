import Foundation

/// A type that can identify a model: `UUID`, `String`, `Int` or `Int64`.
///
/// Identifiers are stored as order-preserving keys, so records of an entity are kept in
/// identifier order. Rill defines the conformances; other types are not supported: a
/// `ModelContainer` refuses a model whose id is of another type (`.invalidConfiguration`).
public protocol ModelIdentifier: Hashable, Codable, Sendable, CustomStringConvertible {}

extension Int64: ModelIdentifier {}

extension Int: ModelIdentifier {}

extension String: ModelIdentifier {}

extension UUID: ModelIdentifier {}

extension ModelIdentifier {
    /// The identifier's storage key.
    package var storageKey: [UInt8] {
        var key: [UInt8] = []
        key.reserveCapacity(17)
        appendStorageKey(to: &key)
        return key
    }

    /// Appends the identifier's storage key: its kind's byte, then big-endian bytes with the sign
    /// bit flipped (integers), the UTF-8 of the NFC form (strings) or the 16 bytes (UUIDs), so that
    /// keys sort as the identifiers do, and identifiers Swift calls equal have one key: `"caf\u{E9}"`
    /// and `"cafe\u{301}"` are one identifier, as they are one key of a `Dictionary`.
    ///
    /// The encoding is the store's, not the identifier type's: it is chosen here by type, among
    /// the four types Rill defines as identifiers (the comparisons of `Self` fold away wherever the
    /// type is known).
    @inline(__always)
    package func appendStorageKey(to key: inout [UInt8]) {
        if Self.self == String.self {
            key.append(IdentifierKind.string.rawValue)
            Self.appendNFC(unsafeBitCast(self, to: String.self), to: &key)
        } else if Self.self == UUID.self {
            key.append(IdentifierKind.uuid.rawValue)
            withUnsafeBytes(of: unsafeBitCast(self, to: UUID.self).uuid) { key.append(contentsOf: $0) }
        } else if Self.self == Int64.self {
            Self.appendIntegerKey(unsafeBitCast(self, to: Int64.self), to: &key)
        } else if Self.self == Int.self {
            Self.appendIntegerKey(Int64(unsafeBitCast(self, to: Int.self)), to: &key)
        } else {
            preconditionFailure("\(Self.self) is not a model identifier: use UUID, String, Int or Int64")
        }
    }

    /// The identifier whose storage key is `key`; nil when `key` is not a key of `Self`.
    package static func fromStorageKey(_ key: UnsafeRawBufferPointer) -> Self? {
        if Self.self == String.self {
            return String(storageKey: key).map { unsafeBitCast($0, to: Self.self) }
        } else if Self.self == UUID.self {
            return UUID(storageKey: key).map { unsafeBitCast($0, to: Self.self) }
        } else if Self.self == Int64.self {
            return Int64(storageKey: key).map { unsafeBitCast($0, to: Self.self) }
        } else if Self.self == Int.self {
            return Int(storageKey: key).map { unsafeBitCast($0, to: Self.self) }
        }
        return nil
    }

    /// Appends the UTF-8 of the NFC form of `text`, by the standard library's normalizer (the one
    /// `String.==` uses, as index keys do). Bytes below 0xCC encode only scalars below U+0300,
    /// which are in NFC and compose with nothing: such text (all ASCII among it) is copied as it is.
    @inline(__always)
    package static func appendNFC(_ text: String, to key: inout [UInt8]) {
        let copied = text.utf8.withContiguousStorageIfAvailable { bytes in
            guard bytes.allSatisfy({ $0 < 0xCC }) else { return false }
            key.append(contentsOf: bytes)
            return true
        }
        if copied != true { text._withNFCCodeUnits { key.append($0) } }
    }

    private static func appendIntegerKey(_ value: Int64, to key: inout [UInt8]) {
        key.append(IdentifierKind.integer.rawValue)
        // Flipping the sign bit makes big-endian bytes sort like the signed value.
        let biased = UInt64(bitPattern: value) ^ (1 << 63)
        withUnsafeBytes(of: biased.bigEndian) { key.append(contentsOf: $0) }
    }
}

extension Int64 {
    /// Parses an integer identifier from its storage key; nil when the key is of another kind.
    package init?(storageKey key: UnsafeRawBufferPointer) {
        guard key.count == 9, key[0] == IdentifierKind.integer.rawValue else { return nil }
        let biased = key.dropFirst().reduce(UInt64(0)) { $0 << 8 | UInt64($1) }
        self = Int64(bitPattern: biased ^ (1 << 63))
    }
}

extension Int {
    /// Parses an integer identifier from its storage key; nil when the key is of another kind or
    /// the value does not fit.
    package init?(storageKey key: UnsafeRawBufferPointer) {
        guard let value = Int64(storageKey: key), let exact = Int(exactly: value) else { return nil }
        self = exact
    }
}

extension String {
    /// Parses a string identifier from its storage key; nil when the key is of another kind.
    package init?(storageKey key: UnsafeRawBufferPointer) {
        guard key.count >= 1, key[0] == IdentifierKind.string.rawValue,
            let string = String(validating: key.dropFirst(), as: UTF8.self)
        else { return nil }
        self = string
    }
}

extension UUID {
    /// Parses a UUID identifier from its storage key; nil when the key is of another kind.
    package init?(storageKey key: UnsafeRawBufferPointer) {
        guard key.count == 17, key[0] == IdentifierKind.uuid.rawValue else { return nil }
        var raw: uuid_t = (0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0)
        withUnsafeMutableBytes(of: &raw) { $0.copyMemory(from: UnsafeRawBufferPointer(rebasing: key.dropFirst())) }
        self = UUID(uuid: raw)
    }
}
