/// One HTTP/1.1 request, as `rill serve` reads it: request line, headers, and a body of
/// `Content-Length` bytes (chunked request bodies are refused).
package struct HTTPRequest {
    /// The method, as sent (`GET`, `POST`, `OPTIONS`).
    package var method: String
    /// The path, percent-decoded.
    package var path: String
    /// The query string's parameters, percent-decoded (`+` as a space).
    package var parameters: [String: String]
    /// Header names lowercased; a repeated header keeps its last value.
    package var headers: [String: String]
    /// The body: `Content-Length` bytes, empty without one.
    package var body: [UInt8]
    /// HTTP/1.1 keeps the connection open unless told otherwise; HTTP/1.0 closes it.
    package var keepAlive: Bool
}
