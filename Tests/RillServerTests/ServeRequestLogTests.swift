import Foundation
import RillTestSupport
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// Every response carries a request id (`X-Request-Id`, the client's own when sane), and the log
/// line of the request carries it with the client; `--log-format json` writes one JSON object a line.
@Suite struct ServeRequestLogTests {
    let directory = TemporaryDirectory()

    /// The log's lines, each parsed as a JSON object (a line that is not one fails the test).
    static func jsonLines(_ text: String) -> [[String: Any]] {
        text.split(separator: "\n").compactMap { line in
            let object = (try? JSONSerialization.jsonObject(with: Data(line.utf8))) as? [String: Any]
            #expect(object != nil, "not a JSON object: \(line)")
            return object
        }
    }

    @Test func jsonLinesCarryTheRequestIDOfTheResponseHeader() throws {
        let path = try directory.counterStore(records: 2)
        let daemon = try DaemonProcess(
            store: path, arguments: ["--log-format", "json", "--log-level", "debug"], log: directory.path("serve.log"))
        let client = try ServeLoggingTests.client(daemon.socket)
        let made = try #require(client.request("GET", "/v1/health"))
        let madeID = try #require(made.headers["x-request-id"])
        #expect(madeID.count == 16 && madeID.allSatisfy(\.isHexDigit), "a made id: \(madeID)")
        let given = try #require(client.request("GET", "/v1/nowhere", headers: ["X-Request-Id: proxy-42.a:b/c+d=e@f"]))
        #expect(given.status == 404)
        #expect(given.headers["x-request-id"] == "proxy-42.a:b/c+d=e@f", "a sane id is kept")
        let insane = String(repeating: "x", count: 129)
        for bad in [insane, "two words", "quote\"d", "tab\there"] {
            let response = try #require(client.request("GET", "/v1/health", headers: ["X-Request-Id: \(bad)"]))
            let id = try #require(response.headers["x-request-id"])
            #expect(id != bad && id.count == 16, "'\(bad)' is replaced by a made id, got \(id)")
        }
        let stream = EventStreamReader(
            try ServeLoggingTests.client(daemon.socket), query: "Counter", extraHeaders: ["X-Request-Id: sub-1"])
        #expect(stream.wait { !$0.isEmpty })
        shutdown(stream.client.fd, Int32(SHUT_RDWR))
        #expect(daemon.stop() == 0)

        let lines = Self.jsonLines(daemon.logText)
        #expect(lines.contains { ($0["message"] as? String)?.hasPrefix("serving") == true })
        for line in lines {
            #expect(line["time"] is String && line["level"] is String && line["message"] is String, "\(line)")
        }
        let health = try #require(lines.first { $0["requestId"] as? String == madeID }, "\(daemon.logText)")
        #expect(health["method"] as? String == "GET")
        #expect(health["path"] as? String == "/v1/health")
        #expect(health["status"] as? Int == 200)
        #expect(health["level"] as? String == "debug")
        #expect(health["milliseconds"] is Double || health["milliseconds"] is Int)
        #expect((health["client"] as? String)?.hasPrefix("unix:pid=\(getpid())") == true, "\(health)")
        let missing = try #require(lines.first { $0["requestId"] as? String == "proxy-42.a:b/c+d=e@f" })
        #expect(missing["status"] as? Int == 404)
        #expect(missing["level"] as? String == "warning")
        #expect((missing["message"] as? String)?.contains("notFound") == true)
        let subscriber = lines.filter { $0["requestId"] as? String == "sub-1" }.compactMap { $0["message"] as? String }
        #expect(subscriber.contains { $0.contains("follows 'Counter'") }, "\(subscriber)")
        #expect(subscriber.contains { $0.contains("ended") }, "\(subscriber)")
    }

    @Test func textLinesCarryTheRequestIDAndTheClient() throws {
        let path = try directory.counterStore(records: 1)
        let daemon = try DaemonProcess(
            store: path, arguments: ["--log-level", "debug"], log: directory.path("serve.log"))
        let response = try #require(try ServeLoggingTests.client(daemon.socket).request("GET", "/v1/health"))
        let id = try #require(response.headers["x-request-id"])
        #expect(daemon.stop() == 0)
        let line = try #require(daemon.logText.split(separator: "\n").first { $0.contains(id) }, "\(daemon.logText)")
        #expect(line.contains("debug [\(id) unix:pid=\(getpid())] GET /v1/health 200 ("), "\(line)")
    }

    @Test func aRequestThatDoesNotParseGetsAMadeIDInItsAnswerAndItsLine() throws {
        let path = try directory.counterStore(records: 1)
        let daemon = try DaemonProcess(
            store: path, arguments: ["--log-format", "json"], log: directory.path("serve.log"))
        let client = try ServeLoggingTests.client(daemon.socket)
        client.send(Array("GET / HTTP/9\r\n\r\n".utf8))
        let response = try #require(client.response())
        #expect(response.status == 505)
        let id = try #require(response.headers["x-request-id"])
        #expect(daemon.stop() == 0)
        let line = try #require(Self.jsonLines(daemon.logText).first { $0["requestId"] as? String == id })
        #expect(line["status"] as? Int == 505)
        #expect((line["client"] as? String)?.hasPrefix("unix:pid=") == true)
    }

    @Test func aBadLogFormatIsAUsageError() throws {
        let path = try directory.counterStore(records: 1)
        let run = try runBuilt("rill", ["serve", path, "--log-format", "xml"])
        #expect(run.status == 64, "\(run)")
        #expect(run.error.contains("--log-format takes text or json; got 'xml'"), "\(run.error)")
    }
}
