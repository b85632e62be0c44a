import Foundation

#if canImport(Glibc)
    import Glibc
#endif

/// Readiness for systemd (`Type=notify`): the `sd_notify` protocol, spoken directly.
///
/// When `NOTIFY_SOCKET` names a Unix datagram socket (a path, or an abstract name when it starts
/// with `@`), the daemon sends it `READY=1` once it accepts connections and `STOPPING=1` when it
/// begins to stop, each a datagram of its own. Without the variable nothing is sent. A failure to
/// send is logged and otherwise ignored: the daemon serves whether or not systemd heard it.
///
/// With `WatchdogSec=` in the unit, systemd sets `WATCHDOG_USEC` (and `WATCHDOG_PID`): the daemon
/// then sends `WATCHDOG=1` at half that interval, each time after checking that it still serves.
package struct SystemdNotifier: Sendable {
    /// The socket's address as given (`/run/systemd/notify`, `@name`); nil: do not notify.
    package let address: String?
    /// How often systemd expects `WATCHDOG=1`, in seconds; nil when it does not (no
    /// `WATCHDOG_USEC`, or a `WATCHDOG_PID` naming another process).
    package let watchdogInterval: Double?

    /// A notifier to the socket `NOTIFY_SOCKET` names in `environment`.
    package init(environment: [String: String] = ProcessInfo.processInfo.environment) {
        let value = environment["NOTIFY_SOCKET"]
        address = value?.isEmpty == false ? value : nil
        if address != nil, let text = environment["WATCHDOG_USEC"], let microseconds = UInt64(text), microseconds > 0,
            environment["WATCHDOG_PID"].map({ Int32($0) == getpid() }) ?? true
        {
            watchdogInterval = Double(microseconds) / 1_000_000
        } else {
            watchdogInterval = nil
        }
    }

    /// Tells the watchdog the daemon is alive: `WATCHDOG=1`.
    package func alive() { send("WATCHDOG=1\n") }

    /// Says the daemon serves: `READY=1`, with its process id and a status line.
    package func ready(status: String) {
        send("READY=1\nMAINPID=\(getpid())\nSTATUS=\(status)\n")
    }

    /// Says the daemon is stopping: `STOPPING=1`.
    package func stopping() { send("STOPPING=1\n") }

    /// Sends `message` as one datagram; false (logged) when it could not be sent.
    @discardableResult
    package func send(_ message: String) -> Bool {
        guard let address else { return false }
        do {
            try Self.send(Array(message.utf8), to: address)
            return true
        } catch {
            Log.warning("cannot notify systemd through NOTIFY_SOCKET=\(address): \(error.message)")
            return false
        }
    }

    /// Why a notification was not sent.
    struct NotifyError: Error {
        var message: String
    }

    private static func send(_ bytes: [UInt8], to address: String) throws(NotifyError) {
        var path = Array(address.utf8)
        if path.first == UInt8(ascii: "@") {
            // An abstract name: a leading NUL byte, and the name's length alone counts.
            path[0] = 0
        } else if path.first != UInt8(ascii: "/") {
            throw NotifyError(message: "not an absolute path nor an abstract name (@…)")
        }
        var socketAddress = sockaddr_un()
        socketAddress.sun_family = sa_family_t(AF_UNIX)
        let capacity = MemoryLayout.size(ofValue: socketAddress.sun_path)
        guard path.count < capacity else {
            throw NotifyError(message: "the address is longer than \(capacity - 1) bytes")
        }
        withUnsafeMutableBytes(of: &socketAddress.sun_path) { raw in
            for (index, byte) in path.enumerated() { raw[index] = byte }
        }
        let length = socklen_t(MemoryLayout<sa_family_t>.size + path.count)
        let fd = socket(AF_UNIX, Int32(SOCK_DGRAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard fd >= 0 else { throw NotifyError(message: String(cString: strerror(errno))) }
        defer { close(fd) }
        let sent = withUnsafePointer(to: &socketAddress) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { address in
                bytes.withUnsafeBytes { sendto(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL), address, length) }
            }
        }
        guard sent == bytes.count else { throw NotifyError(message: String(cString: strerror(errno))) }
    }
}
