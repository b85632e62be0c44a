import Foundation
import RillTestSupport
import Testing

@testable import RillServer

#if canImport(Glibc)
    import Glibc
#endif

/// Readiness for systemd: with `NOTIFY_SOCKET` set, the daemon sends `READY=1` once it serves and
/// `STOPPING=1` when it stops, each a datagram on that Unix socket (a path, or an abstract name).
@Suite struct ServeReadinessTests {
    let directory = TemporaryDirectory()

    /// A Unix datagram socket bound at `address` (`@name`: abstract), as systemd's notify socket is.
    final class NotifySocket {
        let fd: Int32

        init(_ address: String) throws {
            fd = socket(AF_UNIX, Int32(SOCK_DGRAM.rawValue), 0)
            var socketAddress = sockaddr_un()
            socketAddress.sun_family = sa_family_t(AF_UNIX)
            var path = Array(address.utf8)
            if path.first == UInt8(ascii: "@") { path[0] = 0 }
            withUnsafeMutableBytes(of: &socketAddress.sun_path) { raw in
                for (index, byte) in path.enumerated() { raw[index] = byte }
            }
            let length = socklen_t(MemoryLayout<sa_family_t>.size + path.count)
            let bound = withUnsafePointer(to: &socketAddress) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, length) }
            }
            guard fd >= 0, bound == 0 else {
                throw SystemdNotifier.NotifyError(message: "bind \(address): \(errno)")
            }
            var time = timeval(tv_sec: 20, tv_usec: 0)
            setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &time, socklen_t(MemoryLayout<timeval>.size))
        }

        deinit { close(fd) }

        /// The next datagram, nil after 20 s without one.
        func receive() -> String? {
            var buffer = [UInt8](repeating: 0, count: 4096)
            let count = buffer.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
            return count >= 0 ? String(decoding: buffer[0..<count], as: UTF8.self) : nil
        }
    }

    func checkReadiness(at address: String, bind: String) throws {
        let listener = try NotifySocket(bind)
        let path = try directory.counterStore(records: 1)
        let daemon = try DaemonProcess(
            store: path, environment: ["NOTIFY_SOCKET": address], log: directory.path("serve-\(UUID()).log"))
        let ready = try #require(listener.receive(), "READY=1 within 20 s; log: \(daemon.logText)")
        let fields = ready.split(separator: "\n")
        #expect(fields.contains("READY=1"), "\(ready)")
        #expect(fields.contains("MAINPID=\(daemon.process.processIdentifier)"), "\(ready)")
        // Ready means serving: the socket answers.
        #expect(try ServeLoggingTests.client(daemon.socket).request("GET", "/v1/health")?.status == 200)
        kill(daemon.process.processIdentifier, SIGTERM)
        let stopping = try #require(listener.receive(), "STOPPING=1 within 20 s; log: \(daemon.logText)")
        #expect(stopping == "STOPPING=1\n")
        #expect(daemon.stop() == 0)
        #expect(!daemon.logText.contains("cannot notify"), "\(daemon.logText)")
    }

    @Test func readyAndStoppingGoToAPathSocket() throws {
        let socket = directory.path("notify.sock")
        try checkReadiness(at: socket, bind: socket)
    }

    @Test func readyAndStoppingGoToAnAbstractSocket() throws {
        let name = "@rill-notify-test-\(getpid())-\(UInt32.random(in: 0...UInt32.max))"
        try checkReadiness(at: name, bind: name)
    }

    @Test func aNotifySocketThatIsNotThereIsLoggedAndServingGoesOn() throws {
        let path = try directory.counterStore(records: 1)
        let daemon = try DaemonProcess(
            store: path, environment: ["NOTIFY_SOCKET": directory.path("absent.sock")],
            log: directory.path("serve.log"))
        #expect(try ServeLoggingTests.client(daemon.socket).request("GET", "/v1/health")?.status == 200)
        #expect(daemon.stop() == 0)
        #expect(daemon.logText.contains("cannot notify systemd through NOTIFY_SOCKET="), "\(daemon.logText)")
    }

    @Test func withoutNotifySocketNothingIsSent() {
        let notifier = SystemdNotifier(environment: [:])
        #expect(notifier.address == nil)
        #expect(!notifier.send("READY=1\n"))
        #expect(SystemdNotifier(environment: ["NOTIFY_SOCKET": ""]).address == nil)
    }

    @Test func aRelativeAddressIsRefused() throws {
        let notifier = SystemdNotifier(environment: ["NOTIFY_SOCKET": "relative.sock"])
        #expect(!notifier.send("READY=1\n"))
    }

    @Test func theWatchdogIsToldAtHalfItsInterval() throws {
        let socket = directory.path("watchdog.sock")
        let listener = try NotifySocket(socket)
        let path = try directory.counterStore(records: 1)
        let daemon = try DaemonProcess(
            store: path, environment: ["NOTIFY_SOCKET": socket, "WATCHDOG_USEC": "400000"],
            log: directory.path("serve-watchdog.log"))
        var messages: [String] = []
        while messages.filter({ $0 == "WATCHDOG=1\n" }).count < 3, let message = listener.receive() {
            messages.append(message)
        }
        #expect(messages.first?.hasPrefix("READY=1") == true, "\(messages)")
        #expect(messages.filter { $0 == "WATCHDOG=1\n" }.count == 3, "\(messages); log: \(daemon.logText)")
        #expect(daemon.stop() == 0)
    }

    @Test func aWatchdogOfAnotherProcessIsNotTold() {
        let socket = ["NOTIFY_SOCKET": "/run/notify"]
        #expect(SystemdNotifier(environment: socket.merging(["WATCHDOG_USEC": "1000000"]) { $1 }).watchdogInterval == 1)
        #expect(
            SystemdNotifier(
                environment: socket.merging(["WATCHDOG_USEC": "1000000", "WATCHDOG_PID": "\(getpid())"]) { $1 }
            )
            .watchdogInterval == 1)
        #expect(
            SystemdNotifier(environment: socket.merging(["WATCHDOG_USEC": "1000000", "WATCHDOG_PID": "1"]) { $1 })
                .watchdogInterval == nil)
        #expect(SystemdNotifier(environment: socket.merging(["WATCHDOG_USEC": "0"]) { $1 }).watchdogInterval == nil)
        #expect(SystemdNotifier(environment: ["WATCHDOG_USEC": "1000000"]).watchdogInterval == nil)
    }
}
