import Foundation
import RillHTTP
import RillLocks
import RillWorkloads

#if canImport(Glibc)
    import Glibc
#endif

/// Subscribers of `rill serve` joining and leaving, on a thread of the soak: up to `maximum`
/// event streams open at once, each on a query of its own, read for a random while (0.2 to
/// 3 s) and then closed, and another opened in its place.
package final class SubscriberChurn: Sendable {
    private let socket: String
    private let maximum: Int
    private let seed: UInt64
    private let state = Lock(State())
    private let done = DispatchSemaphore(value: 0)

    private struct State {
        var joined = 0
        var refused = 0
        var bytes = 0
        var stopping = false
    }

    package init(socket: String, maximum: Int, seed: UInt64) {
        self.socket = socket
        self.maximum = maximum
        self.seed = seed
    }

    /// Subscriptions opened so far.
    package var joined: Int { state.withLock { $0.joined } }
    /// Connections or subscriptions that failed.
    package var refused: Int { state.withLock { $0.refused } }
    /// Bytes of events received.
    package var bytes: Int { state.withLock { $0.bytes } }

    package func start() {
        let thread = Thread { [self] in
            churn()
            done.signal()
        }
        thread.name = "rill-torture.subscribers"
        thread.start()
    }

    package func stop() {
        state.withLock { $0.stopping = true }
        done.wait()
    }

    private func churn() {
        var random = SeededGenerator(seed: seed)
        var open: [(fd: Int32, until: Date)] = []
        var chunk = [UInt8](repeating: 0, count: 65536)
        while !state.withLock({ $0.stopping }) {
            let now = Date()
            for subscriber in open where subscriber.until <= now { close(subscriber.fd) }
            open.removeAll { $0.until <= now }
            while open.count < maximum {
                let writer = Int.random(in: 0..<3, using: &random)
                let low = Int.random(in: 0..<5_000, using: &random)
                let query = "TortureItem where writer == \(writer) and number >= \(low) sort by number limit 20"
                let encoded = query.addingPercentEncoding(withAllowedCharacters: .alphanumerics) ?? ""
                guard let fd = try? Socket.connect(.unix(socket)),
                    Socket.write(fd, Array("GET /v1/subscribe?q=\(encoded) HTTP/1.1\r\nHost: rill\r\n\r\n".utf8))
                else {
                    state.withLock { $0.refused += 1 }
                    break
                }
                open.append((fd, now.addingTimeInterval(Double.random(in: 0.2...3, using: &random))))
                state.withLock { $0.joined += 1 }
            }
            var received = 0
            for subscriber in open {
                while true {
                    let count = chunk.withUnsafeMutableBytes {
                        recv(subscriber.fd, $0.baseAddress, $0.count, Int32(MSG_DONTWAIT))
                    }
                    guard count > 0 else { break }
                    received += count
                }
            }
            state.withLock { $0.bytes += received }
            usleep(50_000)
        }
        for subscriber in open { close(subscriber.fd) }
    }
}
