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
