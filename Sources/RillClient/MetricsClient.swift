import Foundation
import RillHTTP

#if canImport(Glibc)
    import Glibc
#endif

/// Reads a daemon's `GET /metrics` (`rill stats --url`): its samples, by name and labels.
package struct MetricsClient {
    /// One sample of the exposition: `name{labels} value`.
    package struct Sample: Equatable, Sendable {
        package var name: String
        /// The labels as written between the braces (`listener="unix"`), empty without any.
        package var labels: String
        package var value: Double

        /// `name` or `name{labels}`.
        package var key: String { labels.isEmpty ? name : "\(name){\(labels)}" }
    }

    /// The daemon's address.
    package var address: SocketAddress
    /// The bearer token, for TCP.
    package var token: String?
    /// How long the daemon has to answer, in seconds.
    package var timeout = 10.0

    package init(address: SocketAddress, token: String?) {
        self.address = address
        self.token = token
    }

    /// The daemon's samples, in the order it wrote them.
    ///
    /// - Throws: ``SocketError`` when no daemon answers; ``EventStreamClient/Refused`` for an
    ///   HTTP error (a wrong token: 401).
    package func samples() throws -> [Sample] {
        Self.samples(in: try exposition())
    }

    /// The text of `GET /metrics`.
    package func exposition() throws -> String {
        let fd = try Socket.connect(address)
        defer { close(fd) }
        Socket.setTimeouts(fd, receive: timeout, send: timeout)
        var request = "GET /metrics HTTP/1.1\r\nHost: rill\r\nConnection: close\r\n"
        if let token { request += "Authorization: Bearer \(token)\r\n" }
        guard Socket.write(fd, Array((request + "\r\n").utf8)) else { throw SocketError("send") }
        var bytes: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 64 << 10)
        while true {
            let count = chunk.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
            if count < 0, errno == EINTR { continue }
            if count < 0 { throw SocketError("recv") }
            if count == 0 { break }
            bytes += chunk[0..<count]
        }
        guard let end = bytes.indices.dropLast(3).first(where: { bytes[$0..<$0 + 4].elementsEqual([13, 10, 13, 10]) })
        else { throw SocketError("the daemon's answer has no HTTP head", ECONNRESET) }
        let head = String(decoding: bytes[0..<end], as: UTF8.self)
        let body = String(decoding: bytes[(end + 4)...], as: UTF8.self)
        let status = Int(head.split(separator: " ").dropFirst().first ?? "") ?? 0
        guard status == 200 else {
            let object = (try? JSONSerialization.jsonObject(with: Data(body.utf8))) as? [String: Any]
            let message = (object?["error"] as? [String: Any])?["message"] as? String ?? body
            throw EventStreamClient.Refused(status: status, message: message)
        }
        return body
    }

    /// The samples of a text exposition; comments and lines that are not samples are skipped.
    package static func samples(in text: String) -> [Sample] {
        text.split(separator: "\n").compactMap { line -> Sample? in
            guard !line.hasPrefix("#"), let space = line.lastIndex(of: " ") else { return nil }
            let series = line[..<space]
            guard let value = Double(line[line.index(after: space)...].replacingOccurrences(of: "Inf", with: "inf"))
            else { return nil }
            if let brace = series.firstIndex(of: "{"), series.hasSuffix("}") {
                let labels = series[series.index(after: brace)..<series.index(before: series.endIndex)]
                return Sample(name: String(series[..<brace]), labels: String(labels), value: value)
            }
            return Sample(name: String(series), labels: "", value: value)
        }
    }
}
