import Foundation
import RillHTTP

#if canImport(Glibc)
    import Glibc
#endif

/// One raw connection to `rill serve` of the `hostile` suite: it sends whatever bytes it is
/// given, well-formed or not, and reads back what the daemon answers, each read bounded in time.
final class HostileConnection {
    let fd: Int32
    private var buffer: [UInt8] = []

    /// What the daemon answered: the status of its response and its body.
    struct Response {
        let status: Int
        let body: String
    }

    /// A connection to `address`; throws when it cannot be made.
    init(_ address: SocketAddress) throws { fd = try Socket.connect(address) }

    deinit { close(fd) }

    /// Sends all of `bytes`; false when the daemon closed the connection first.
    @discardableResult
    func send(_ bytes: [UInt8]) -> Bool {
        var offset = 0
        while offset < bytes.count {
            let sent = bytes.withUnsafeBytes {
                Glibc.send(fd, $0.baseAddress! + offset, $0.count - offset, Int32(MSG_NOSIGNAL))
            }
            if sent < 0, errno == EINTR { continue }
            if sent <= 0 { return false }
            offset += sent
        }
        return true
    }

    @discardableResult
    func send(_ text: String) -> Bool { send(Array(text.utf8)) }

    /// Reads what has arrived, waiting up to `seconds` for something; false at the end of the
    /// stream, on an error, or when nothing came in time.
    func receive(within seconds: Double) -> Bool {
        var entry = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
        guard poll(&entry, 1, Int32(seconds * 1000)) > 0 else { return false }
        var chunk = [UInt8](repeating: 0, count: 64 << 10)
        let count = chunk.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, Int32(MSG_DONTWAIT)) }
        guard count > 0 else { return false }
        buffer.append(contentsOf: chunk[0..<count])
        return true
    }

    /// The next response, read within `seconds`; nil when the connection ends or time runs out first.
    func response(within seconds: Double = 20) -> Response? {
        let deadline = Date().addingTimeInterval(seconds)
        while true {
            if let end = Self.find([13, 10, 13, 10], in: buffer) {
                let head = String(decoding: buffer[0..<end], as: UTF8.self)
                let fields = head.split(separator: " ", maxSplits: 2)
                let status = fields.count > 1 ? Int(fields[1]) ?? 0 : 0
                let length =
                    head.components(separatedBy: "\r\n").first { $0.lowercased().hasPrefix("content-length:") }
                    .flatMap { Int($0.dropFirst(15).trimmingCharacters(in: .whitespaces)) } ?? 0
                while buffer.count < end + 4 + length {
                    guard receive(within: deadline.timeIntervalSinceNow) else { return nil }
                }
                let body = String(decoding: buffer[end + 4..<end + 4 + length], as: UTF8.self)
                buffer.removeSubrange(0..<end + 4 + length)
                return Response(status: status, body: body)
            }
            guard deadline.timeIntervalSinceNow > 0, receive(within: deadline.timeIntervalSinceNow) else { return nil }
        }
    }

    /// Sends a request and reads its response.
    func request(_ method: String, _ target: String, body: String? = nil, headers: [String] = []) -> Response? {
        var text = "\(method) \(target) HTTP/1.1\r\nHost: rill\r\n"
        for header in headers { text += header + "\r\n" }
        if let body { text += "Content-Length: \(body.utf8.count)\r\n" }
        guard send(text + "\r\n" + (body ?? "")) else { return nil }
        return response()
    }

    /// Whether the daemon closed the connection within `seconds` (what it sent before is kept in
    /// ``pending``).
    func closedByPeer(within seconds: Double) -> Bool {
        let deadline = Date().addingTimeInterval(seconds)
        while deadline.timeIntervalSinceNow > 0 {
            var entry = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
            guard poll(&entry, 1, Int32(max(deadline.timeIntervalSinceNow, 0) * 1000) + 1) > 0 else { continue }
            var chunk = [UInt8](repeating: 0, count: 64 << 10)
            let count = chunk.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, Int32(MSG_DONTWAIT)) }
            if count > 0 { buffer.append(contentsOf: chunk[0..<count]) }
            if count == 0 || (count < 0 && errno != EAGAIN && errno != EINTR) { return true }
        }
        return false
    }

    /// Bytes received and not yet taken as a response.
    var pending: String { String(decoding: buffer, as: UTF8.self) }

    private static func find(_ needle: [UInt8], in haystack: [UInt8]) -> Int? {
        guard haystack.count >= needle.count else { return nil }
        for index in 0...(haystack.count - needle.count)
        where haystack[index] == needle[0] && haystack[index..<index + needle.count].elementsEqual(needle) {
            return index
        }
        return nil
    }
}
