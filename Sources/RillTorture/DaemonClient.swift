import Foundation
import RillHTTP

#if canImport(Glibc)
    import Glibc
#endif

/// An HTTP/1.1 client of `rill serve` on its Unix socket, for the suites: one connection,
/// requests one after another, connected again after the daemon went away.
package final class DaemonClient {
    private let socket: String
    private var fd: Int32 = -1
    private var buffer: [UInt8] = []

    /// A response: its status and its body.
    package struct Response {
        package var status: Int
        package var body: String
    }

    package init(socket: String) { self.socket = socket }

    deinit { disconnect() }

    package func disconnect() {
        if fd >= 0 { close(fd) }
        fd = -1
        buffer.removeAll()
    }

    /// Sends one request and reads its response; nil when the daemon cannot be reached or the
    /// connection ended before the whole response came (the connection is then dropped).
    package func request(_ method: String, _ target: String, body: String? = nil) -> Response? {
        if fd < 0 {
            guard let connected = try? Socket.connect(.unix(socket)) else { return nil }
            fd = connected
            Socket.setTimeouts(fd, receive: 20, send: 20)
        }
        let payload = Array((body ?? "").utf8)
        var head = "\(method) \(target) HTTP/1.1\r\nHost: rill\r\n"
        if body != nil { head += "Content-Type: application/json\r\nContent-Length: \(payload.count)\r\n" }
        head += "\r\n"
        guard Socket.write(fd, Array(head.utf8) + payload), let response = readResponse() else {
            disconnect()
            return nil
        }
        return response
    }

    private func readResponse() -> Response? {
        while true {
            if let end = headEnd() {
                let head = String(decoding: buffer[0..<end], as: UTF8.self)
                let fields = head.split(separator: " ", maxSplits: 2)
                guard fields.count >= 2, let status = Int(fields[1]) else { return nil }
                let length =
                    head.components(separatedBy: "\r\n")
                    .first { $0.lowercased().hasPrefix("content-length:") }
                    .flatMap { Int($0.dropFirst(15).trimmingCharacters(in: .whitespaces)) } ?? 0
                while buffer.count < end + 4 + length { guard readMore() else { return nil } }
                let body = String(decoding: buffer[end + 4..<end + 4 + length], as: UTF8.self)
                buffer.removeSubrange(0..<end + 4 + length)
                return Response(status: status, body: body)
            }
            guard readMore() else { return nil }
        }
    }

    private func headEnd() -> Int? {
        guard buffer.count >= 4 else { return nil }
        return (0...buffer.count - 4).first {
            buffer[$0] == 13 && buffer[$0 + 1] == 10 && buffer[$0 + 2] == 13 && buffer[$0 + 3] == 10
        }
    }

    private func readMore() -> Bool {
        var chunk = [UInt8](repeating: 0, count: 65536)
        while true {
            let count = chunk.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
            if count < 0, errno == EINTR { continue }
            guard count > 0 else { return false }
            buffer.append(contentsOf: chunk[0..<count])
            return true
        }
    }
}
