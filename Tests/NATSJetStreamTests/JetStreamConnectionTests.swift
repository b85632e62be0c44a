import Foundation
import NATSJetStream
import RillTestSupport
import RillWorkloads
import Testing

extension NATSServer {
    /// A connection, once the server accepts one (it takes a moment to start).
    func connect(name: String = "test") throws -> JetStreamConnection {
        try whenReady { try JetStreamConnection(servers: [url], name: name, timeout: 2) }
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

        var generator = SeededGenerator(label: "JetStreamConnectionTests")
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
        // With the last sequence it expected then, which the stream has moved past: the id is looked up first.
        let retried = try connection.publish(
            stored[6], subject: "rill.books.commits", messageID: "m-6", expectedLast: 6)
        #expect(retried == .init(sequence: 7, duplicate: true))

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
