import Rill

/// The query of a request (Documentation/Protocol.md, "Queries" and "Subscriptions"): `?q=…` in
/// the URL, or a body `{"query":"…"}`, parsed.
package struct QueryRequest: Sendable {
    /// The query, parsed (not yet checked against its entity's fields).
    package var query: Query

    /// Reads the query from the `q` parameter, or else from the body.
    ///
    /// - Throws: ``ServiceError`` 400: `invalidJSON` for a body that is not JSON, `badQuery` for
    ///   one of another shape, no query at all, or a query that does not parse (with its caret line).
    package init(parameter: String?, body: [UInt8]) throws(ServiceError) {
        var text = parameter
        if text == nil, !body.isEmpty {
            guard case .map(let fields) = try RecordValue.parsing(body: body),
                case .string(let query)? = fields.first(where: { $0.name == "query" })?.value
            else { throw ServiceError(status: 400, code: "badQuery", message: "the body must be {\"query\": \"…\"}") }
            text = query
        }
        guard let text else { throw ServiceError(status: 400, code: "badQuery", message: "give a query as ?q=…") }
        do {
            query = try QueryParser.parse(text)
        } catch {
            throw ServiceError(status: 400, code: "badQuery", message: "\(error)")
        }
    }
}
