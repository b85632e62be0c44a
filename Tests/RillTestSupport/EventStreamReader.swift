import Foundation
import RillLocks

#if canImport(Glibc)
    import Glibc
#endif

/// A raw Server-Sent Events reader on its own thread.
package final class EventStreamReader: @unchecked Sendable {
    package let client: HTTPTestClient
    package let events = Lock<[(name: String, id: UInt64, data: String)]>([])
    package let status = Lock<Int?>(nil)

    /// Subscribes to `query` on `client` (nil: the request was sent already) and reads.
    package init(_ client: HTTPTestClient, query: String?, lastEventID: UInt64? = nil, extraHeaders: [String] = []) {
        self.client = client
        if let query {
            let encoded = query.addingPercentEncoding(withAllowedCharacters: .alphanumerics) ?? query
            var request = "GET /v1/subscribe?q=\(encoded) HTTP/1.1\r\nHost: rill\r\n"
            if let lastEventID { request += "Last-Event-ID: \(lastEventID)\r\n" }
            for header in extraHeaders { request += header + "\r\n" }
            client.send(Array((request + "\r\n").utf8))
        }
        let thread = Thread { [self] in read() }
        thread.start()
    }

    private func read() {
        var text = ""
        var headDone = false
        var chunk = [UInt8](repeating: 0, count: 65536)
        while true {
            let count = chunk.withUnsafeMutableBytes { recv(client.fd, $0.baseAddress, $0.count, 0) }
            guard count > 0 else { return }
            text += String(decoding: chunk[0..<count], as: UTF8.self)
            if !headDone, let range = text.range(of: "\r\n\r\n") {
                status.withLock { $0 = Int(text.split(separator: " ")[1]) }
                text = String(text[range.upperBound...])
                headDone = true
            }
            guard headDone else { continue }
            while let range = text.range(of: "\n\n") {
                let block = String(text[..<range.lowerBound])
                text = String(text[range.upperBound...])
                var name = "message"
                var id: UInt64 = 0
                var data = ""
                for line in block.split(separator: "\n") {
                    if line.hasPrefix("event: ") { name = String(line.dropFirst(7)) }
                    if line.hasPrefix("id: ") { id = UInt64(line.dropFirst(4)) ?? 0 }
                    if line.hasPrefix("data: ") { data = String(line.dropFirst(6)) }
                }
                if !data.isEmpty { events.withLock { $0.append((name, id, data)) } }
            }
        }
    }

    package var received: [(name: String, id: UInt64, data: String)] { events.withLock { $0 } }

    package func wait(until condition: ([(name: String, id: UInt64, data: String)]) -> Bool) -> Bool {
        let deadline = Date().addingTimeInterval(30)
        while Date() < deadline {
            if condition(received) { return true }
            usleep(10_000)
        }
        return condition(received)
    }
}
