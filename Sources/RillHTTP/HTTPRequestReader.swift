import Foundation

/// Reads requests from a connection's bytes.
package struct HTTPRequestReader {
    /// The bytes received and not yet taken as a request.
    package private(set) var buffer: [UInt8] = []
    /// What a request may hold; past it, the reader throws.
    package let limits: HTTPLimits
    /// The request whose head is whole and whose body is still arriving (its `body` empty), and
    /// where that body starts in `buffer`.
    private var pending: (request: HTTPRequest, bodyStart: Int, length: Int)?

    /// A reader of requests within `limits`.
    package init(limits: HTTPLimits) { self.limits = limits }

    /// Adds bytes read from the connection.
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
            // Too large only once the blank line can no longer end within the limit: a head of
            // exactly `headerBytes` may still be missing the last bytes of its blank line, and
            // refusing it then would make the answer depend on how the bytes arrived.
            if buffer.count >= limits.headerBytes + 4 {
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
