import Foundation
import RillHTTP

#if canImport(Glibc)
    import Glibc
#endif

/// One HTTP/1.1 connection, requests one after another.
package final class HTTPTestClient {
    package let fd: Int32
    private var buffer: [UInt8] = []

    package init(unix path: String) throws { fd = try Socket.connect(.unix(path)) }

    package init(port: UInt16) throws { fd = try Socket.connect(.tcp(host: "127.0.0.1", port: port)) }

    deinit { close(fd) }

    package func send(_ bytes: [UInt8]) {
        var offset = 0
        while offset < bytes.count {
            let sent = bytes.withUnsafeBytes {
                Glibc.send(fd, $0.baseAddress! + offset, $0.count - offset, Int32(MSG_NOSIGNAL))
            }
            if sent <= 0 { return }
            offset += sent
        }
    }

    /// Reads more bytes; false at the end of the stream.
    package func readMore() -> Bool {
        var chunk = [UInt8](repeating: 0, count: 65536)
        let count = chunk.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
        guard count > 0 else { return false }
        buffer.append(contentsOf: chunk[0..<count])
        return true
    }

    /// The next response (nil when the connection ends first).
    package func response() -> HTTPTestResponse? {
        while true {
            if let end = buffer.indices.dropLast(3).first(where: {
                buffer[$0..<$0 + 4].elementsEqual([13, 10, 13, 10])
            }) {
                let head = String(decoding: buffer[0..<end], as: UTF8.self)
                let status = Int(head.split(separator: " ")[1]) ?? 0
                let length =
                    head.components(separatedBy: "\r\n").first { $0.lowercased().hasPrefix("content-length:") }
                    .flatMap { Int($0.dropFirst(15).trimmingCharacters(in: .whitespaces)) } ?? 0
                while buffer.count < end + 4 + length { guard readMore() else { return nil } }
                let body = String(decoding: buffer[end + 4..<end + 4 + length], as: UTF8.self)
                buffer.removeSubrange(0..<end + 4 + length)
                var headers: [String: String] = [:]
                for line in head.components(separatedBy: "\r\n").dropFirst() {
                    guard let colon = line.firstIndex(of: ":") else { continue }
                    headers[line[..<colon].lowercased()] = line[line.index(after: colon)...]
                        .trimmingCharacters(in: .whitespaces)
                }
                return HTTPTestResponse(status: status, body: body, headers: headers)
            }
            guard readMore() else { return nil }
        }
    }

    package func request(
        _ method: String, _ target: String, body: String? = nil, headers: [String] = []
    ) -> HTTPTestResponse? {
        var text = "\(method) \(target) HTTP/1.1\r\nHost: rill\r\n"
        for header in headers { text += header + "\r\n" }
        if let body { text += "Content-Length: \(body.utf8.count)\r\n" }
        send(Array((text + "\r\n" + (body ?? "")).utf8))
        return response()
    }
}
