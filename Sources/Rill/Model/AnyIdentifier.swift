import Foundation

/// A stored identifier of any kind, as read back from a key by code that lacks the model type.
package enum AnyIdentifier: Hashable, Sendable, CustomStringConvertible {
    case integer(Int64)
    case string(String)
    case uuid(UUID)

    package init?(storageKey key: UnsafeRawBufferPointer) {
        guard let first = key.first, let kind = IdentifierKind(rawValue: first) else { return nil }
        switch kind {
        case .integer: guard let v = Int64(storageKey: key) else { return nil }; self = .integer(v)
        case .string: guard let v = String(storageKey: key) else { return nil }; self = .string(v)
        case .uuid: guard let v = UUID(storageKey: key) else { return nil }; self = .uuid(v)
        }
    }

    /// Parses `text` as an identifier of `kind` (as typed at a terminal).
    package init?(parsing text: String, as kind: IdentifierKind) {
        switch kind {
        case .integer: guard let v = Int64(text) else { return nil }; self = .integer(v)
        case .string: self = .string(text)
        case .uuid: guard let v = UUIDText.uuid(text) else { return nil }; self = .uuid(v)
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
