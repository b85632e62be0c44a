import Rill
import RillHTTP

extension Connection {
    /// The query parameters each endpoint reads (Documentation/Protocol.md). Every endpoint also
    /// reads `access_token`, the bearer token of a client that cannot send headers (`EventSource`).
    static let parameterNames: [String: [String]] = [
        "/v1/query": ["q", "as_of"],
        "/v1/schema": ["entity"],
        "/v1/subscribe": ["q", "since", "progress", "subscription"],
        "/v1/history": ["since", "until", "entity", "author", "limit", "order", "before_after"],
        "/v1/save": [], "/v1/health": [], "/v1/subscriptions": [], "/metrics": [],
    ]

    /// Refuses a parameter the endpoint does not read, naming it and the ones it does: a
    /// misspelt `as_of` would otherwise be ignored, and the answer be another question's.
    static func checkParameters(of request: HTTPRequest) throws(HTTPError) {
        let known: [String]
        if let names = parameterNames[request.path] {
            known = names
        } else if request.path.hasPrefix("/v1/subscriptions/") {
            known = []
        } else {
            return
        }
        for name in request.parameters.keys.sorted() where name != "access_token" && !known.contains(name) {
            let suggestion = NameSuggestion.closest(to: name, among: known).map { " (did you mean '\($0)'?)" } ?? ""
            let takes = known.isEmpty ? "takes none" : "takes " + known.joined(separator: ", ")
            throw HTTPError(
                status: 400, code: "unknownParameter",
                message: "\(request.path) has no parameter '\(name)'\(suggestion); it \(takes)")
        }
    }
}
