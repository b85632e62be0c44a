import Rill
import RillJetStream
import Testing

/// `nats://…` addresses of a replicated log: what they take, and the errors naming what they do not.
struct JetStreamAddressTests {
    @Test(arguments: [
        ("nats://n1:4222/books", ["nats://n1:4222"], "books", 1, "nats://n1:4222/books"),
        (
            "nats://n1,n2:5000,n3/b-1", ["nats://n1:4222", "nats://n2:5000", "nats://n3:4222"], "b-1", 3,
            "nats://n1:4222,n2:5000,n3:4222/b-1"
        ),
        ("nats://[::1]:4222/s?replicas=1", ["nats://[::1]:4222"], "s", 1, "nats://[::1]:4222/s"),
        (
            "nats://a,b/s?replicas=1&timeout=2.5", ["nats://a:4222", "nats://b:4222"], "s", 1,
            "nats://a:4222,b:4222/s?replicas=1&timeout=2.5"
        ),
        (
            "nats://a,b,c,d,e,f/s", ["a", "b", "c", "d", "e", "f"].map { "nats://\($0):4222" }, "s", 5,
            "nats://a:4222,b:4222,c:4222,d:4222,e:4222,f:4222/s"
        ),
    ])
    func readsAnAddress(text: String, servers: [String], stream: String, replicas: Int, written: String) throws {
        let address = try JetStreamAddress(text)
        #expect(address.servers == servers)
        #expect(address.stream == stream)
        #expect(address.replicas == replicas)
        #expect(address.description == written)
        #expect(try JetStreamAddress(address.description) == address)
    }

    @Test(arguments: [
        ("http://n1:4222/books", "not a nats:// URL"),
        ("nats://n1:4222", "names no stream"),
        ("nats://n1:4222/", "stream name ''"),
        ("nats://n1:4222/a.b", "stream name 'a.b'"),
        ("nats://n1:4222/a b", "stream name 'a b'"),
        ("nats://n1:99999/s", "no port 1 to 65535"),
        ("nats://n1:x/s", "no port 1 to 65535"),
        ("nats://n1,,n2/s", "an empty server"),
        ("nats://[::1/s", "no closing ']'"),
        ("nats://n1/s?replicas=7", "1 to 5 replicas, not 7"),
        ("nats://n1/s?replicas=two", "replicas=two"),
        ("nats://n1/s?timeout=-1", "the timeout must be positive"),
        ("nats://n1/s?color=red", "'color=red'"),
        ("nats://user@n1/s", "is not host:port"),
    ])
    func namesWhatIsWrong(text: String, problem: String) {
        do {
            _ = try JetStreamAddress(text)
            Issue.record("\(text) was taken")
        } catch let error as RillError {
            #expect(error.code == .invalidConfiguration)
            #expect(error.message.contains(problem), "\(error.message)")
        } catch {
            Issue.record("not a RillError: \(error)")
        }
    }
}
