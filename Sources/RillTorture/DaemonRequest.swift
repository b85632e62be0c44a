import Foundation

#if canImport(Glibc)
    import Glibc
#endif

/// One HTTP request to `rill serve` over its Unix socket, on a connection of its own.
package enum DaemonRequest {
    /// Sends `method target` with `body` and returns the response's status and body; nil when the
    /// daemon could not be reached or closed the connection before answering.
    package static func send(
        socket path: String, _ method: String, _ target: String, body: String? = nil
    ) -> (
        status: Int, body: String
    )? {
        let fd = Glibc.socket(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { return nil }
        defer { close(fd) }
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        let bytes = Array(path.utf8)
        guard bytes.count < MemoryLayout.size(ofValue: address.sun_path) else { return nil }
        withUnsafeMutableBytes(of: &address.sun_path) { raw in
            raw.copyBytes(from: bytes)
            raw[bytes.count] = 0
        }
        let connected = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                connect(fd, $0, socklen_t(MemoryLayout<sockaddr_un>.size))
            }
        }
        guard connected == 0 else { return nil }
        var timeout = timeval(tv_sec: 30, tv_usec: 0)
        setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        let payload = Array((body ?? "").utf8)
        let head =
            "\(method) \(target) HTTP/1.1\r\nHost: rill\r\nConnection: close\r\n"
            + (body == nil ? "" : "Content-Type: application/json\r\nContent-Length: \(payload.count)\r\n") + "\r\n"
        let request = Array(head.utf8) + payload
        var offset = 0
        while offset < request.count {
            let sent = request.withUnsafeBytes {
                Glibc.send(fd, $0.baseAddress! + offset, $0.count - offset, Int32(MSG_NOSIGNAL))
            }
            guard sent > 0 else { return nil }
            offset += sent
        }
        var response: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 65536)
        while true {
            let count = chunk.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
            if count <= 0 { break }
            response += chunk[0..<count]
            if let parsed = parse(response) { return parsed }
        }
        return parse(response)
    }

    /// The status and body of a whole response (its `Content-Length` bytes in), else nil.
    private static func parse(_ bytes: [UInt8]) -> (status: Int, body: String)? {
        guard let end = bytes.indices.dropLast(3).first(where: { bytes[$0..<$0 + 4].elementsEqual([13, 10, 13, 10]) })
        else { return nil }
        let head = String(decoding: bytes[0..<end], as: UTF8.self)
        let fields = head.split(separator: " ")
        guard fields.count > 1, let status = Int(fields[1]) else { return nil }
        let length =
            head.components(separatedBy: "\r\n").first { $0.lowercased().hasPrefix("content-length:") }
            .flatMap { Int($0.dropFirst(15).trimmingCharacters(in: .whitespaces)) } ?? 0
        guard bytes.count >= end + 4 + length else { return nil }
        return (status, String(decoding: bytes[(end + 4)..<(end + 4 + length)], as: UTF8.self))
    }
}
