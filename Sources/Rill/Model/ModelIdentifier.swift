import Foundation

/// A type that can identify a model: `UUID`, `String`, `Int` or `Int64`.
///
/// Identifiers are stored as order-preserving keys, so records of an entity are kept in
/// identifier order. Rill defines the conformances; other types are not supported.
public protocol ModelIdentifier: Hashable, Codable, Sendable, CustomStringConvertible {
    /// Appends the identifier's storage key. Not for use outside Rill.
    func _appendStorageKey(to key: inout [UInt8])
    /// Parses an identifier from its storage key; nil when the key is of another kind.
    init?(_storageKey key: UnsafeRawBufferPointer)
}

/// The kinds of stored identifiers; the first byte of every identifier key.
package enum IdentifierKind: UInt8, Sendable, CaseIterable {
    case integer = 1
    case string = 2
    case uuid = 3

    package var name: String {
        switch self {
        case .integer: "Int"
        case .string: "String"
        case .uuid: "UUID"
        }
    }
}

extension Int64: ModelIdentifier {
    public func _appendStorageKey(to key: inout [UInt8]) {
        key.append(IdentifierKind.integer.rawValue)
        // Flipping the sign bit makes big-endian bytes sort like the signed value.
        let biased = UInt64(bitPattern: self) ^ (1 << 63)
        withUnsafeBytes(of: biased.bigEndian) { key.append(contentsOf: $0) }
    }

    public init?(_storageKey key: UnsafeRawBufferPointer) {
        guard key.count == 9, key[0] == IdentifierKind.integer.rawValue else { return nil }
        let biased = key.dropFirst().reduce(UInt64(0)) { $0 << 8 | UInt64($1) }
        self = Int64(bitPattern: biased ^ (1 << 63))
    }
}

extension Int: ModelIdentifier {
    public func _appendStorageKey(to key: inout [UInt8]) {
        Int64(self)._appendStorageKey(to: &key)
    }

    public init?(_storageKey key: UnsafeRawBufferPointer) {
        guard let value = Int64(_storageKey: key), let exact = Int(exactly: value) else { return nil }
        self = exact
    }
}

extension String: ModelIdentifier {
    public func _appendStorageKey(to key: inout [UInt8]) {
        key.append(IdentifierKind.string.rawValue)
        key.append(contentsOf: utf8)
    }

    public init?(_storageKey key: UnsafeRawBufferPointer) {
        guard key.count >= 1, key[0] == IdentifierKind.string.rawValue,
            let string = String(validating: key.dropFirst(), as: UTF8.self)
        else { return nil }
        self = string
    }
}

extension UUID: ModelIdentifier {
    public func _appendStorageKey(to key: inout [UInt8]) {
        key.append(IdentifierKind.uuid.rawValue)
        withUnsafeBytes(of: uuid) { key.append(contentsOf: $0) }
    }

    public init?(_storageKey key: UnsafeRawBufferPointer) {
        guard key.count == 17, key[0] == IdentifierKind.uuid.rawValue else { return nil }
        var raw: uuid_t = (0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0)
        withUnsafeMutableBytes(of: &raw) { $0.copyMemory(from: UnsafeRawBufferPointer(rebasing: key.dropFirst())) }
        self = UUID(uuid: raw)
    }
}

extension ModelIdentifier {
    /// The identifier's storage key.
    package var storageKey: [UInt8] {
        var key: [UInt8] = []
        key.reserveCapacity(17)
        _appendStorageKey(to: &key)
        return key
    }
}

/// A stored identifier of any kind, as read back from a key by code that lacks the model type.
package enum AnyIdentifier: Hashable, Sendable, CustomStringConvertible {
    case integer(Int64)
    case string(String)
    case uuid(UUID)

    package init?(storageKey key: UnsafeRawBufferPointer) {
        guard let first = key.first, let kind = IdentifierKind(rawValue: first) else { return nil }
        switch kind {
        case .integer: guard let v = Int64(_storageKey: key) else { return nil }; self = .integer(v)
        case .string: guard let v = String(_storageKey: key) else { return nil }; self = .string(v)
        case .uuid: guard let v = UUID(_storageKey: key) else { return nil }; self = .uuid(v)
        }
    }

    /// Parses `text` as an identifier of `kind` (as typed at a terminal).
    package init?(parsing text: String, as kind: IdentifierKind) {
        switch kind {
        case .integer: guard let v = Int64(text) else { return nil }; self = .integer(v)
        case .string: self = .string(text)
        case .uuid: guard let v = UUID(uuidString: text) else { return nil }; self = .uuid(v)
        }
    }

    package var storageKey: [UInt8] {
        switch self {
        case .integer(let v): v.storageKey
        case .string(let v): v.storageKey
        case .uuid(let v): v.storageKey
        }
    }

    package var description: String {
        switch self {
        case .integer(let v): String(v)
        case .string(let v): v
        case .uuid(let v): v.uuidString
        }
    }
}
