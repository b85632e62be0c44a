import Foundation

/// The reserved words, matched case-insensitively.
enum QueryKeyword: String {
    case `where`, and, or, not, `in`, between, contains, beginswith, endswith, like, any, all
    case sort, by, asc, desc, limit, offset, `nil`, null, `true`, `false`
}
