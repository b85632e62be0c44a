import Foundation
import RillLocks
import RillTestSupport
import Testing

@testable import RillClient
@testable import RillHTTP
@testable import RillService

#if canImport(Glibc)
    import Glibc
#endif

/// The client of `rill watch --connect`, against a stand-in for the daemon on a Unix socket: it
/// reads events, connects again after a drop with the last event's id, and stops at a refusal.
@Suite struct EventStreamClientTests {
    let directory = TemporaryDirectory()

    @Test func addressesAreSocketsDirectoriesOrURLs() throws {
        #expect(EventStreamClient.address("http://example.org:8080/v1")?.description == "http://example.org:8080")
        #expect(EventStreamClient.address("http://example.org")?.description == "http://example.org:80")
        #expect(EventStreamClient.address("unix:/run/rill.sock")?.description == "unix:/run/rill.sock")
        #expect(EventStreamClient.address(directory.url.path)?.description == "unix:\(directory.path("rill.sock"))")
    }

    @Test func resumesAfterADropWithTheLastEventIDAndStopsAtARefusal() throws {
        let path = directory.path("rill.sock")
        let listener = try Socket.listen(.unix(path))
        defer { close(listener) }
        let requests = Lock<[String]>([])
        let results = ServerSentEvent.results([], sequence: 4)
        let refusal = ServiceError(status: 404, code: "unknownEntity", message: "the store has no entity X").json
        let responses = [
            "HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\n\r\n" + ServerSentEvent.streamStart
                + results.framed + ServerSentEvent.keepAlive,
            "HTTP/1.1 404 Not Found\r\nContent-Length: \(refusal.utf8.count)\r\n\r\n" + refusal,
        ]
        let server = Thread {
            for response in responses {
                let fd = Socket.accept(listener, tcp: false)
                guard fd >= 0 else { return }
                var buffer = [UInt8](repeating: 0, count: 4096)
                let count = recv(fd, &buffer, buffer.count, 0)
                requests.withLock { $0.append(String(decoding: buffer.prefix(max(count, 0)), as: UTF8.self)) }
                _ = Socket.write(fd, Array(response.utf8))
                close(fd)
            }
        }
        server.start()
        var events: [ServerSentEvent] = []
        var notices: [String] = []
        var client = EventStreamClient(address: .unix(path), query: "Book limit 2", notice: { notices.append($0) })
        #expect {
            try client.run { events.append($0) }
        } throws: { error in
            (error as? EventStreamClient.Refused).map { $0.status == 404 && $0.message == "the store has no entity X" }
                ?? false
        }
        #expect(events == [results])
        let sent = requests.withLock { $0 }
        #expect(sent.count == 2)
        #expect(sent.first?.hasPrefix("GET /v1/subscribe?q=Book%20limit%202 HTTP/1.1\r\n") == true)
        #expect(sent.first?.contains("Last-Event-ID") == false)
        #expect(sent.last?.contains("Last-Event-ID: 4\r\n") == true)
        #expect(notices.count == 1)
        #expect(notices.first?.hasPrefix("lost the connection to unix:\(path)") == true)
    }

    @Test func aProgressEventMovesTheResumePosition() throws {
        let path = directory.path("rill.sock")
        let listener = try Socket.listen(.unix(path))
        defer { close(listener) }
        let requests = Lock<[String]>([])
        let events = [ServerSentEvent.results([], sequence: 4), ServerSentEvent.progress(9)]
        let refusal = ServiceError(status: 404, code: "unknownEntity", message: "gone").json
        let responses = [
            "HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\n\r\n" + ServerSentEvent.streamStart
                + events.map(\.framed).joined(),
            "HTTP/1.1 404 Not Found\r\nContent-Length: \(refusal.utf8.count)\r\n\r\n" + refusal,
        ]
        let server = Thread {
            for response in responses {
                let fd = Socket.accept(listener, tcp: false)
                guard fd >= 0 else { return }
                var buffer = [UInt8](repeating: 0, count: 4096)
                let count = recv(fd, &buffer, buffer.count, 0)
                requests.withLock { $0.append(String(decoding: buffer.prefix(max(count, 0)), as: UTF8.self)) }
                _ = Socket.write(fd, Array(response.utf8))
                close(fd)
            }
        }
        server.start()
        var received: [ServerSentEvent] = []
        var client = EventStreamClient(address: .unix(path), query: "Book", progressSeconds: 0.5)
        #expect(throws: EventStreamClient.Refused.self) { try client.run { received.append($0) } }
        #expect(received == events, "the progress event is handed on, not taken for an error")
        #expect(client.lastEventID == "9")
        let sent = requests.withLock { $0 }
        #expect(sent.first?.hasPrefix("GET /v1/subscribe?q=Book&progress=0.5 HTTP/1.1\r\n") == true)
        #expect(sent.last?.contains("Last-Event-ID: 9\r\n") == true, "the reconnection resumes after the progress id")
    }
}
