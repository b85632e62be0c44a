import Foundation

extension Query {
    /// The query in the text query language: `<Entity> [where …] [sort by …] [limit n] [offset n]`.
    ///
    /// A query that `QueryParser.parse(_:)` made reads back as an equal query, so a query can be
    /// shown, stored or sent as text and parsed again. For example:
    ///
    ///     Book where pages > 300 sort by title desc limit 20
    package var text: String {
        var text = QueryNode.path([entity])
        if let predicate { text += " where \(predicate)" }
        if !sort.isEmpty {
            text += " sort by "
            text += sort.map { QueryNode.path($0.path) + ($0.ascending ? "" : " desc") }.joined(separator: ", ")
        }
        if let limit { text += " limit \(limit)" }
        if let offset { text += " offset \(offset)" }
        return text
    }
}
