import RillHTTP

/// The HTTP request reader fed a connection's bytes in chunks of random sizes: what it reads (the
/// requests, then the error that closes the connection, or nothing more) does not depend on how
/// the bytes were split, and every request it returns is within its limits.
///
/// The input: a byte for the head limit, a byte for the body limit, two bytes seeding the chunk
/// sizes, then the bytes of the connection.
package enum HTTPRequestReaderFuzzTarget {
    /// What a reader made of a connection's bytes.
    struct Outcome: Equatable {
        var requests: [Request] = []
        /// The error that ended the reading; nil when the reader waits for more bytes.
        var error: String?
    }

    /// A request's parts (`HTTPRequest` is not `Equatable`).
    struct Request: Equatable {
        var method: String
        var path: String
        var parameters: [String: String]
        var headers: [String: String]
        var body: [UInt8]
        var keepAlive: Bool

        init(_ request: HTTPRequest) {
            method = request.method
            path = request.path
            parameters = request.parameters
            headers = request.headers
            body = request.body
            keepAlive = request.keepAlive
        }
    }

    package static func run(_ data: [UInt8]) throws {
        var input = FuzzInput(data)
        let limits = HTTPLimits(headerBytes: 16 + input.int(in: 0...255) * 4, bodyBytes: input.int(in: 0...255) * 8)
        var seed = UInt64(input.byte()) << 8 | UInt64(input.byte()) | 1
        let stream = Array(input.rest)

        // All the bytes at once, each request's size checked against the limits.
        var whole = HTTPRequestReader(limits: limits)
        stream.withUnsafeBytes { whole.append($0) }
        var expected = Outcome()
        var consumed = 0
        do {
            while true {
                let before = whole.buffer.count
                guard let request = try whole.next() else { break }
                let size = before - whole.buffer.count
                let head = size - request.body.count - 4
                guard request.body.count <= limits.bodyBytes, head <= limits.headerBytes, head >= 0 else {
                    throw FuzzFailure(
                        "a request of \(head) head bytes and \(request.body.count) body bytes passed the limits "
                            + "\(limits.headerBytes) and \(limits.bodyBytes)")
                }
                consumed += size
                expected.requests.append(Request(request))
            }
        } catch let error as HTTPError {
            expected.error = "\(error.status) \(error.code): \(error.message)"
        }
        guard consumed <= stream.count else { throw FuzzFailure("the reader took more bytes than it was given") }

        // The same bytes in chunks of 1 to 64 bytes (mostly small), read after each chunk.
        var chunked = HTTPRequestReader(limits: limits)
        var outcome = Outcome()
        var offset = 0
        reading: while offset < stream.count {
            seed = seed &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
            let size = Int((seed >> 33) % ((seed >> 60) & 1 == 0 ? 8 : 64)) + 1
            let end = min(offset + size, stream.count)
            stream[offset..<end].withUnsafeBytes { chunked.append($0) }
            offset = end
            do {
                while let request = try chunked.next() { outcome.requests.append(Request(request)) }
            } catch {
                outcome.error = "\(error.status) \(error.code): \(error.message)"
                break reading
            }
        }
        guard outcome == expected else {
            throw FuzzFailure(
                "read in chunks, \(stream.count) bytes gave \(outcome.requests.count) requests then "
                    + "\(outcome.error ?? "a wait for more"); at once, \(expected.requests.count) requests then "
                    + "\(expected.error ?? "a wait for more") (limits \(limits.headerBytes), \(limits.bodyBytes))")
        }
    }
}
