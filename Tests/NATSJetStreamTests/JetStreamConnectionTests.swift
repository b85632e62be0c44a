import Foundation
import NATSJetStream
import RillTestSupport
import Testing

/// A `nats-server` with JetStream on a loopback port of its own, storing in a temporary directory;
/// stopped when released.
final class NATSServer: @unchecked Sendable {
    let process = Process()
    let port: Int
    let directory = TemporaryDirectory("rill-nats")

    static var executable: String? {
        ["/usr/sbin/nats-server", "/usr/bin/nats-server", "/usr/local/bin/nats-server"].first {
            FileManager.default.isExecutableFile(atPath: $0)
        }
    }

    init() throws {
        let executable = try #require(Self.executable, "nats-server is not installed (make deps installs it)")
        port = Int.random(in: 20_000...45_000)
        process.executableURL = URL(fileURLWithPath: executable)
        process.arguments = ["-js", "-a", "127.0.0.1", "-p", "\(port)", "-sd", directory.path("jetstream")]
        process.standardOutput = FileHandle.nullDevice
        process.standardError = FileHandle.nullDevice
        try process.run()
    }

    var url: String { "nats://127.0.0.1:\(port)" }

    /// A connection, once the server accepts one (it takes a moment to start).
    func connect(name: String = "test") throws -> JetStreamConnection {
        let deadline = Date().addingTimeInterval(10)
        while true {
            do {
                let connection = try JetStreamConnection(servers: [url], name: name, timeout: 2)
                _ = try? connection.streamState(named: "probe")
                return connection
            } catch let error as JetStreamError where Date() < deadline && process.isRunning {
                _ = error
                Thread.sleep(forTimeInterval: 0.05)
            }
        }
    }

    deinit {
        process.terminate()
        process.waitUntilExit()
    }
}

@Suite(.enabled(if: NATSServer.executable != nil, "nats-server is not installed"))
struct JetStreamConnectionTests {
    @Test func publishesInOrderOnlyAfterTheExpectedLastMessage() throws {
        let server = try NATSServer()
        let connection = try server.connect()
        let created = try connection.ensureStream(named: "books", subject: "rill.books.commits", replicas: 1)
        #expect(created.last == 0)
        #expect(created.subjects == ["rill.books.commits"])
        // The same stream again: kept as it is.
        #expect(try connection.ensureStream(named: "books", subject: "rill.books.commits", replicas: 1).last == 0)

        let seed = UInt64.random(in: 0...UInt64.max)
        print("JetStreamConnectionTests seed \(seed)")
        var generator = SplitMix(seed)
        var stored: [[UInt8]] = []
        for index in 0..<40 {
            let payload = (0..<Int(generator.next() % 300)).map { _ in UInt8(truncatingIfNeeded: generator.next()) }
            // A publish that expects a message the stream does not end with stores nothing.
            let wrong = UInt64(stored.count) + 1 + generator.next() % 3
            #expect(throws: JetStreamError.self) {
                _ = try connection.publish(
                    payload, subject: "rill.books.commits", messageID: "wrong-\(index)", expectedLast: wrong)
            }
            let ack = try connection.publish(
                payload, subject: "rill.books.commits", messageID: "m-\(index)", expectedLast: UInt64(stored.count))
            stored.append(payload)
            #expect(ack == .init(sequence: UInt64(stored.count), duplicate: false))
        }
        do {
            _ = try connection.publish([1], subject: "rill.books.commits", messageID: "late", expectedLast: 3)
            Issue.record("a publish expecting message 3 of 40 was stored")
        } catch let error as JetStreamError {
            #expect(error.kind == .wrongLastSequence, "\(error)")
        }
        // A publish repeated with its id (an answer lost, say) is the first one's, stored once.
        let again = try connection.publish(
            stored[6], subject: "rill.books.commits", messageID: "m-6", expectedLast: UInt64(stored.count))
        #expect(again == .init(sequence: 7, duplicate: true))

        let state = try connection.streamState(named: "books")
        #expect(state.first == 1 && state.last == UInt64(stored.count))
        for (offset, payload) in stored.enumerated() {
            #expect(try connection.message(UInt64(offset + 1), stream: "books") == payload)
        }
        #expect(try connection.message(UInt64(stored.count + 1), stream: "books") == nil)

        // An ordered consumer from any message on delivers the rest, in order, once each.
        let start = 1 + generator.next() % UInt64(stored.count)
        let subscription = try connection.subscribe(stream: "books", subject: "rill.books.commits", from: start)
        for sequence in start...UInt64(stored.count) {
            let message = try #require(try subscription.next(timeout: 5))
            #expect(message.sequence == sequence)
            #expect(message.payload == stored[Int(sequence) - 1])
        }
        #expect(try subscription.next(timeout: 0.2) == nil)
        // And what is published later, as it comes.
        _ = try connection.publish([9, 9], subject: "rill.books.commits", messageID: "after", expectedLast: 40)
        let later = try #require(try subscription.next(timeout: 5))
        #expect(later.sequence == 41 && later.payload == [9, 9])
    }

    @Test func aMissingStreamAndAnAbsentServerAreTypedErrors() throws {
        let server = try NATSServer()
        let connection = try server.connect()
        do {
            _ = try connection.streamState(named: "absent")
            Issue.record("a missing stream was read")
        } catch let error as JetStreamError {
            #expect(error.kind == .notFound, "\(error)")
            #expect(error.message.contains("absent"))
        }
        // Nothing listens on port 1.
        do {
            _ = try JetStreamConnection(servers: ["nats://127.0.0.1:1"], name: "nobody", timeout: 0.5)
            Issue.record("a connection to a closed port succeeded")
        } catch let error as JetStreamError {
            #expect(error.kind == .unavailable, "\(error)")
            #expect(error.message.contains("127.0.0.1:1"))
        }
    }
}

/// A seeded generator (SplitMix64), so that a failure can be run again from its printed seed.
struct SplitMix {
    private var state: UInt64
    init(_ seed: UInt64) { state = seed }
    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}
