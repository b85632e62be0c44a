import RillHTTP
import RillService

extension HTTPResponse {
    /// The response to a request that cannot be served: its status and the protocol's error body
    /// (``ServiceError/json``); a 401 asks for a bearer token.
    static func error(_ error: HTTPError) -> HTTPResponse {
        var response = json(error.status, ServiceError.json(code: error.code, message: error.message))
        if error.status == 401 { response.headers.append(("WWW-Authenticate", "Bearer")) }
        return response
    }
}
