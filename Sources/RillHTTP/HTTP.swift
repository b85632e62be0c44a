import Foundation

/// One HTTP/1.1 request, as `rill serve` reads it: request line, headers, and a body of
/// `Content-Length` bytes (chunked request bodies are refused).
package struct HTTPRequest {
    package var method: String
    /// The path, percent-decoded.
    package var path: String
    /// The query string's parameters, percent-decoded (`+` as a space).
    package var parameters: [String: String]
    /// Header names lowercased; a repeated header keeps its last value.
    package var headers: [String: String]
    package var body: [UInt8]
    /// HTTP/1.1 keeps the connection open unless told otherwise; HTTP/1.0 closes it.
    package var keepAlive: Bool
}

/// A request that cannot be served, answered with `status` and a JSON error.
package struct HTTPError: Error {
    package var status: Int
    package var code: String
    package var message: String
    /// The connection cannot be read further (a malformed or oversized request): close it.
    package var closesConnection = false

    package init(status: Int, code: String, message: String, closesConnection: Bool = false) {
        self.status = status
        self.code = code
        self.message = message
        self.closesConnection = closesConnection
    }
}

/// Limits on what a client may send.
package struct HTTPLimits {
    /// The request line and headers together.
    package var headerBytes: Int
    package var bodyBytes: Int

    package init(headerBytes: Int = 16 << 10, bodyBytes: Int = 16 << 20) {
        self.headerBytes = headerBytes
        self.bodyBytes = bodyBytes
    }
}

/// Reads requests from a connection's bytes.
package struct HTTPRequestReader {
    package private(set) var buffer: [UInt8] = []
    package let limits: HTTPLimits
    /// The request whose head is whole and whose body is still arriving (its `body` empty), and
    /// where that body starts in `buffer`.
    private var pending: (request: HTTPRequest, bodyStart: Int, length: Int)?

    package init(limits: HTTPLimits) { self.limits = limits }

    package mutating func append(_ bytes: UnsafeRawBufferPointer) { buffer.append(contentsOf: bytes) }

    /// The request being read once its head is whole, before its body is (the `body` empty), so
    /// that it can be refused without reading the body.
    package var head: HTTPRequest? { pending?.request }

    /// The length of the body still arriving, once the head is whole.
    package var bodyLength: Int? { pending?.length }

    /// The next whole request in the buffer, removed from it; nil when more bytes are needed.
    package mutating func next() throws(HTTPError) -> HTTPRequest? {
        if pending == nil {
            guard let head = try readHead() else { return nil }
            pending = head
        }
        guard let (head, bodyStart, length) = pending, buffer.count - bodyStart >= length else { return nil }
        var request = head
        request.body = Array(buffer[bodyStart..<bodyStart + length])
        buffer.removeSubrange(0..<bodyStart + length)
        pending = nil
        return request
    }

    /// The head at the start of the buffer, parsed; nil when it is not whole yet.
    private func readHead() throws(HTTPError) -> (request: HTTPRequest, bodyStart: Int, length: Int)? {
        guard let headerEnd = Self.find([13, 10, 13, 10], in: buffer, limit: limits.headerBytes + 4) else {
            if buffer.count > limits.headerBytes {
                throw HTTPError(
                    status: 431, code: "headersTooLarge",
                    message: "the request line and headers exceed \(limits.headerBytes) bytes", closesConnection: true)
            }
            return nil
        }
        guard let head = String(validating: buffer[0..<headerEnd], as: UTF8.self) else {
            throw malformed("the request head is not UTF-8")
        }
        var lines = head.components(separatedBy: "\r\n")
        let requestLine = lines.removeFirst().split(separator: " ", omittingEmptySubsequences: false)
        guard requestLine.count == 3, !requestLine[0].isEmpty, requestLine[1].hasPrefix("/") else {
            throw malformed("a request line must be METHOD /path HTTP/1.1")
        }
        let version = requestLine[2]
        guard version == "HTTP/1.1" || version == "HTTP/1.0" else {
            throw HTTPError(
                status: 505, code: "httpVersionNotSupported", message: "only HTTP/1.1 and HTTP/1.0 are served",
                closesConnection: true)
        }
        var headers: [String: String] = [:]
        for line in lines {
            guard let colon = line.firstIndex(of: ":"), colon != line.startIndex,
                !line[..<colon].contains(where: { $0 == " " || $0 == "\t" })
            else { throw malformed("a header line must be Name: value") }
            let name = line[..<colon].lowercased()
            let value = line[line.index(after: colon)...].trimmingCharacters(in: .whitespaces)
            headers[name] = value
        }
        if headers["transfer-encoding"] != nil {
            throw HTTPError(
                status: 411, code: "lengthRequired", message: "send the body with Content-Length, not chunked",
                closesConnection: true)
        }
        var length = 0
        if let text = headers["content-length"] {
            guard let value = Int(text), value >= 0 else { throw malformed("Content-Length must be a whole number") }
            length = value
        }
        guard length <= limits.bodyBytes else {
            throw HTTPError(
                status: 413, code: "bodyTooLarge", message: "the body exceeds \(limits.bodyBytes) bytes",
                closesConnection: true)
        }

        let target = String(requestLine[1])
        let (rawPath, query) =
            target.firstIndex(of: "?").map { (String(target[..<$0]), String(target[target.index(after: $0)...])) }
            ?? (target, "")
        guard let path = rawPath.removingPercentEncoding else { throw malformed("the path has bad percent-encoding") }
        var parameters: [String: String] = [:]
        for pair in query.split(separator: "&") where !pair.isEmpty {
            let parts = pair.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
            guard let name = Self.decodeComponent(parts[0]),
                let value = Self.decodeComponent(parts.count > 1 ? parts[1] : "")
            else { throw malformed("the query string has bad percent-encoding") }
            parameters[name] = value
        }
        let connection = headers["connection"]?.lowercased() ?? ""
        let keepAlive = version == "HTTP/1.1" ? !connection.contains("close") : connection.contains("keep-alive")
        let request = HTTPRequest(
            method: String(requestLine[0]), path: path, parameters: parameters, headers: headers, body: [],
            keepAlive: keepAlive)
        return (request, headerEnd + 4, length)
    }

    private func malformed(_ message: String) -> HTTPError {
        HTTPError(status: 400, code: "malformedRequest", message: message, closesConnection: true)
    }

    private static func decodeComponent(_ text: Substring) -> String? {
        text.replacingOccurrences(of: "+", with: " ").removingPercentEncoding
    }

    private static func find(_ needle: [UInt8], in haystack: [UInt8], limit: Int) -> Int? {
        let end = min(haystack.count, limit) - needle.count
        guard end >= 0 else { return nil }
        var index = 0
        while index <= end {
            if haystack[index] == needle[0], haystack[index..<index + needle.count].elementsEqual(needle) {
                return index
            }
            index += 1
        }
        return nil
    }
}

/// A response: status, headers, body.
package struct HTTPResponse {
    package var status: Int
    package var headers: [(String, String)] = []
    package var body: [UInt8] = []

    package init(status: Int, headers: [(String, String)] = [], body: [UInt8] = []) {
        self.status = status
        self.headers = headers
        self.body = body
    }

    package static func json(_ status: Int, _ text: String) -> HTTPResponse {
        HTTPResponse(
            status: status, headers: [("Content-Type", "application/json; charset=utf-8")],
            body: Array((text + "\n").utf8))
    }

    package static func error(_ error: HTTPError) -> HTTPResponse {
        var response = json(
            error.status,
            #"{"error":{"code":\#(jsonQuoted(error.code)),"message":\#(jsonQuoted(error.message))}}"#)
        if error.status == 401 { response.headers.append(("WWW-Authenticate", "Bearer")) }
        return response
    }

    /// The head and body as bytes; `keepAlive` sets the `Connection` header.
    package func serialized(keepAlive: Bool) -> [UInt8] {
        var head = "HTTP/1.1 \(status) \(Self.reason(status))\r\n"
        for (name, value) in headers { head += "\(name): \(value)\r\n" }
        head += "Content-Length: \(body.count)\r\n"
        head += "Connection: \(keepAlive ? "keep-alive" : "close")\r\n\r\n"
        return Array(head.utf8) + body
    }

    package static func reason(_ status: Int) -> String {
        switch status {
        case 200: "OK"
        case 204: "No Content"
        case 400: "Bad Request"
        case 401: "Unauthorized"
        case 403: "Forbidden"
        case 404: "Not Found"
        case 405: "Method Not Allowed"
        case 408: "Request Timeout"
        case 409: "Conflict"
        case 411: "Length Required"
        case 413: "Content Too Large"
        case 415: "Unsupported Media Type"
        case 431: "Request Header Fields Too Large"
        case 500: "Internal Server Error"
        case 503: "Service Unavailable"
        case 505: "HTTP Version Not Supported"
        case 507: "Insufficient Storage"
        default: "Status"
        }
    }
}

/// A string as a JSON string literal.
package func jsonQuoted(_ text: String) -> String {
    var out = "\""
    for scalar in text.unicodeScalars {
        switch scalar {
        case "\"": out += "\\\""
        case "\\": out += "\\\\"
        case "\n": out += "\\n"
        case "\r": out += "\\r"
        case "\t": out += "\\t"
        case _ where scalar.value < 0x20: out += String(format: "\\u%04x", scalar.value)
        default: out.unicodeScalars.append(scalar)
        }
    }
    return out + "\""
}
