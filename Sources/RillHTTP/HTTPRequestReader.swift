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
        // A large body's capacity would stay with the connection for as long as it is kept alive.
        if buffer.capacity > 1 << 20, buffer.count < 64 << 10 {
            var kept: [UInt8] = []
            kept.reserveCapacity(buffer.count)
            kept.append(contentsOf: buffer)
            buffer = kept
        }
        pending = nil
        return request
    }

    /// The head at the start of the buffer, parsed; nil when it is not whole yet.
    private func readHead() throws(HTTPError) -> (request: HTTPRequest, bodyStart: Int, length: Int)? {
        guard let (headerEnd, bareLineFeed) = Self.headEnd(in: buffer, limit: limits.headerBytes + 4) else {
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
        // A head whose lines end with a bare LF would otherwise wait for its end until the
        // request's deadline.
        if bareLineFeed { throw Self.malformed("each line of the request head must end with CR LF") }
        let (request, length) = try Self.parseHead(buffer[0..<headerEnd], limits: limits)
        return (request, headerEnd + 4, length)
    }

    /// The request of `head`, the bytes before the blank line, and the length of its body.
    ///
    /// A head of ASCII bytes (nearly every one) is read from its bytes; any other as text, where
    /// Swift's `Character`s decide (`readingText` reads every head so, for the tests' reference).
    /// Both read the same requests and throw the same errors for the same bytes: in ASCII a byte
    /// is a `Character`, but for CR LF, which both take as the end of a line.
    static func parseHead(
        _ head: ArraySlice<UInt8>, limits: HTTPLimits, readingText: Bool = false
    ) throws(HTTPError) -> (request: HTTPRequest, length: Int) {
        if !readingText, let parsed = try parseASCIIHead(head, limits: limits) { return parsed }
        return try parseTextHead(head, limits: limits)
    }

    private static func parseTextHead(
        _ bytes: ArraySlice<UInt8>, limits: HTTPLimits
    ) throws(HTTPError) -> (request: HTTPRequest, length: Int) {
        guard let head = String(validating: bytes, as: UTF8.self) else {
            throw Self.malformed("the request head is not UTF-8")
        }
        var lines = head.components(separatedBy: "\r\n")
        let requestLine = lines.removeFirst().split(separator: " ", omittingEmptySubsequences: false)
        guard requestLine.count == 3, !requestLine[0].isEmpty, let target = originForm(requestLine[1]) else {
            throw Self.malformed("a request line must be METHOD /path HTTP/1.1")
        }
        let version = requestLine[2]
        guard version == "HTTP/1.1" || version == "HTTP/1.0" else {
            throw versionNotSupported
        }
        var headers: [String: String] = [:]
        for line in lines {
            guard let colon = line.firstIndex(of: ":"), colon != line.startIndex,
                !line[..<colon].contains(where: { $0 == " " || $0 == "\t" })
            else { throw Self.malformed("a header line must be Name: value") }
            let name = line[..<colon].lowercased()
            let value = line[line.index(after: colon)...].trimmingCharacters(in: .whitespaces)
            try add(value, named: name, to: &headers)
        }
        let length = try bodyLength(headers, limits: limits)

        let (rawPath, query) =
            target.firstIndex(of: "?").map { (String(target[..<$0]), String(target[target.index(after: $0)...])) }
            ?? (target, "")
        guard let path = rawPath.removingPercentEncoding else {
            throw Self.malformed("the path has bad percent-encoding, or is not UTF-8 once decoded")
        }
        var parameters: [String: String] = [:]
        for pair in query.split(separator: "&") where !pair.isEmpty {
            let parts = pair.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
            guard let name = Self.decodeComponent(parts[0]),
                let value = Self.decodeComponent(parts.count > 1 ? parts[1] : "")
            else { throw Self.malformed("the query string has bad percent-encoding, or is not UTF-8 once decoded") }
            try addParameter(value, named: name, to: &parameters)
        }
        let request = Self.request(
            method: String(requestLine[0]), path: path, parameters: parameters, headers: headers,
            version: String(version))
        return (request, length)
    }

    /// `parseTextHead` for a head of ASCII bytes, read from the bytes; nil when a byte is not
    /// ASCII. Each step is the text reading's, in its order, so that a head gives the same
    /// request or the same error.
    private static func parseASCIIHead(
        _ head: ArraySlice<UInt8>, limits: HTTPLimits
    ) throws(HTTPError) -> (request: HTTPRequest, length: Int)? {
        guard !head.contains(where: { $0 >= 0x80 }) else { return nil }
        let bytes = Array(head)
        let count = bytes.count
        // A `String` of ASCII bytes: no check of the UTF-8 is needed.
        func text(_ range: Range<Int>) -> String { String(decoding: bytes[range], as: UTF8.self) }
        // The lines, split at CR LF.
        var lines: [Range<Int>] = []
        var start = 0
        var index = 0
        while index + 1 < count {
            if bytes[index] == 13, bytes[index + 1] == 10 {
                lines.append(start..<index)
                index += 2
                start = index
            } else {
                index += 1
            }
        }
        lines.append(start..<count)

        // The request line: three parts split at spaces, empty ones kept.
        let requestLine = lines[0]
        var parts: [Range<Int>] = []
        var partStart = requestLine.lowerBound
        for position in requestLine where bytes[position] == 0x20 {
            parts.append(partStart..<position)
            partStart = position + 1
        }
        parts.append(partStart..<requestLine.upperBound)
        guard parts.count == 3, !parts[0].isEmpty, !parts[1].isEmpty else {
            throw malformed("a request line must be METHOD /path HTTP/1.1")
        }
        // Any other form of target (`http://host/path`) is read as text.
        guard bytes[parts[1].lowerBound] == 0x2F else { return nil }
        let version = text(parts[2])
        guard version == "HTTP/1.1" || version == "HTTP/1.0" else {
            throw versionNotSupported
        }
        var headers: [String: String] = [:]
        for line in lines.dropFirst() {
            guard let colon = line.first(where: { bytes[$0] == 0x3A }), colon != line.lowerBound,
                !(line.lowerBound..<colon).contains(where: { bytes[$0] == 0x20 || bytes[$0] == 0x09 })
            else { throw malformed("a header line must be Name: value") }
            var name = Array(bytes[line.lowerBound..<colon])
            for position in name.indices where name[position] >= 0x41 && name[position] <= 0x5A {
                name[position] += 0x20
            }
            // The value without the spaces and tabs around it (`CharacterSet.whitespaces` in ASCII).
            var valueStart = colon + 1
            var valueEnd = line.upperBound
            while valueStart < valueEnd, bytes[valueStart] == 0x20 || bytes[valueStart] == 0x09 { valueStart += 1 }
            while valueEnd > valueStart, bytes[valueEnd - 1] == 0x20 || bytes[valueEnd - 1] == 0x09 { valueEnd -= 1 }
            try add(text(valueStart..<valueEnd), named: String(decoding: name, as: UTF8.self), to: &headers)
        }
        let length = try bodyLength(headers, limits: limits)

        // The target: the path, then the query string after the first `?`.
        let target = parts[1]
        let question = target.first(where: { bytes[$0] == 0x3F })
        let rawPath = text(target.lowerBound..<(question ?? target.upperBound))
        // Without a `%`, percent-decoding leaves the text as it is.
        let percentFree = { (range: Range<Int>) in !range.contains(where: { bytes[$0] == 0x25 }) }
        let path: String
        if percentFree(target.lowerBound..<(question ?? target.upperBound)) {
            path = rawPath
        } else {
            guard let decoded = rawPath.removingPercentEncoding else {
                throw malformed("the path has bad percent-encoding, or is not UTF-8 once decoded")
            }
            path = decoded
        }
        var parameters: [String: String] = [:]
        if let question {
            // Pairs split at `&`, empty ones skipped; each split at its first `=`.
            var pairStart = question + 1
            for position in (question + 1)...target.upperBound
            where position == target.upperBound || bytes[position] == 0x26 {
                let pair = pairStart..<position
                pairStart = position + 1
                guard !pair.isEmpty else { continue }
                let equals = pair.first(where: { bytes[$0] == 0x3D })
                let nameRange = pair.lowerBound..<(equals ?? pair.upperBound)
                let valueRange = equals.map { ($0 + 1)..<pair.upperBound } ?? pair.upperBound..<pair.upperBound
                func decode(_ range: Range<Int>) -> String? {
                    var component = Array(bytes[range])
                    for position in component.indices where component[position] == 0x2B { component[position] = 0x20 }
                    let decoded = String(decoding: component, as: UTF8.self)
                    return percentFree(range) ? decoded : decoded.removingPercentEncoding
                }
                guard let name = decode(nameRange), let value = decode(valueRange) else {
                    throw malformed("the query string has bad percent-encoding, or is not UTF-8 once decoded")
                }
                try addParameter(value, named: name, to: &parameters)
            }
        }
        let request = Self.request(
            method: text(parts[0]), path: path, parameters: parameters, headers: headers, version: version)
        return (request, length)
    }

    /// The body's length as the headers give it; throws for a chunked body, a bad length or one
    /// past the limit.
    private static func bodyLength(_ headers: [String: String], limits: HTTPLimits) throws(HTTPError) -> Int {
        if headers["transfer-encoding"] != nil { throw chunkedBody }
        var length = 0
        if let text = headers["content-length"] {
            guard !text.isEmpty, text.utf8.allSatisfy({ $0 >= 0x30 && $0 <= 0x39 }), let value = Int(text) else {
                throw malformed("Content-Length must be a whole number")
            }
            length = value
        }
        guard length <= limits.bodyBytes else { throw bodyTooLarge(limits) }
        return length
    }

    /// Adds a header line's value. A repeated `Content-Length` must repeat its value: two lengths
    /// would leave where the body ends, and the next request begins, to a guess. Any other
    /// repeated header keeps its last value.
    private static func add(_ value: String, named name: String, to headers: inout [String: String]) throws(HTTPError) {
        if name == "content-length", let earlier = headers[name], earlier != value {
            throw malformed("Content-Length is given twice, with different values")
        }
        headers[name] = value
    }

    /// Adds a query parameter. Every parameter of the protocol takes one value: one given twice
    /// would leave which of them counts to a guess.
    private static func addParameter(
        _ value: String, named name: String, to parameters: inout [String: String]
    ) throws(HTTPError) {
        guard parameters[name] == nil else { throw malformed("the query parameter '\(name)' is given twice") }
        parameters[name] = value
    }

    /// The origin form (`/path?query`) of a request target: the target itself when it starts
    /// with `/`; the path and query of an absolute-form target (`http://host/path?query`, which
    /// HTTP/1.1 servers must accept), `/` when it has no path; nil for any other target.
    static func originForm(_ target: Substring) -> String? {
        if target.hasPrefix("/") { return String(target) }
        let scheme = target.prefix(8).lowercased()
        guard scheme.hasPrefix("http://") || scheme.hasPrefix("https://"),
            let separator = target.range(of: "://")
        else { return nil }
        let rest = target[separator.upperBound...]
        guard let authority = rest.first, authority != "/", authority != "?" else { return nil }
        guard let end = rest.firstIndex(where: { $0 == "/" || $0 == "?" }) else { return "/" }
        return rest[end] == "?" ? "/" + rest[end...] : String(rest[end...])
    }

    /// The request of a head's parts, kept alive as `version` and the `Connection` header say.
    private static func request(
        method: String, path: String, parameters: [String: String], headers: [String: String], version: String
    ) -> HTTPRequest {
        let connection = headers["connection"]?.lowercased() ?? ""
        let keepAlive = version == "HTTP/1.1" ? !connection.contains("close") : connection.contains("keep-alive")
        return HTTPRequest(
            method: method, path: path, parameters: parameters, headers: headers, body: [], keepAlive: keepAlive)
    }

    private static let versionNotSupported = HTTPError(
        status: 505, code: "httpVersionNotSupported", message: "only HTTP/1.1 and HTTP/1.0 are served",
        closesConnection: true)

    private static let chunkedBody = HTTPError(
        status: 411, code: "lengthRequired", message: "send the body with Content-Length, not chunked",
        closesConnection: true)

    private static func bodyTooLarge(_ limits: HTTPLimits) -> HTTPError {
        HTTPError(
            status: 413, code: "bodyTooLarge", message: "the body exceeds \(limits.bodyBytes) bytes",
            closesConnection: true)
    }

    private static func malformed(_ message: String) -> HTTPError {
        HTTPError(status: 400, code: "malformedRequest", message: message, closesConnection: true)
    }

    private static func decodeComponent(_ text: Substring) -> String? {
        text.replacingOccurrences(of: "+", with: " ").removingPercentEncoding
    }

    /// Where the head in the first `limit` bytes of `buffer` ends: the offset of its CR LF CR LF,
    /// or of two LFs (a line ended by a bare LF) when they end first; nil when neither is there.
    /// Whichever ends first is the answer however the bytes arrive, so one scan decides both.
    private static func headEnd(in buffer: [UInt8], limit: Int) -> (offset: Int, bareLineFeed: Bool)? {
        let end = min(buffer.count, limit)
        var index = 1
        while index < end {
            if buffer[index] == 10 {
                if buffer[index - 1] == 10 { return (index - 1, true) }
                if index >= 3, buffer[index - 1] == 13, buffer[index - 2] == 10, buffer[index - 3] == 13 {
                    return (index - 3, false)
                }
            }
            index += 1
        }
        return nil
    }
}
