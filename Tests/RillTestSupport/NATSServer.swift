import Foundation

#if canImport(Glibc)
    import Glibc
#endif

/// A `nats-server` with JetStream on a loopback port of its own, storing in a temporary directory;
/// stopped when released.
public final class NATSServer: @unchecked Sendable {
    let process = Process()
    public let port: Int
    let directory = TemporaryDirectory("rill-nats")

    /// Where Debian installs the server, nil when it is not installed.
    public static var executable: String? {
        ["/usr/sbin/nats-server", "/usr/bin/nats-server", "/usr/local/bin/nats-server"].first {
            FileManager.default.isExecutableFile(atPath: $0)
        }
    }

    public init() throws {
        port = try Self.unusedPort()
        try start(["-js", "-a", "127.0.0.1", "-p", "\(port)", "-sd", directory.path("jetstream")])
    }

    /// A server of the JetStream cluster `rill` on loopback: clients on `port`, routes on `routePort` to
    /// the other servers' `routes`, storing in `storage`, which outlives it (a server started again on it
    /// with the same ports is the same server to the cluster).
    public init(name: String, port: Int, routePort: Int, routes: [Int], storage: String) throws {
        self.port = port
        try start([
            "-n", name, "-js", "-a", "127.0.0.1", "-p", "\(port)", "-sd", storage, "--cluster_name", "rill",
            "--cluster", "nats://127.0.0.1:\(routePort)",
            "--routes", routes.map { "nats://127.0.0.1:\($0)" }.joined(separator: ","),
        ])
    }

    private func start(_ arguments: [String]) throws {
        guard let executable = Self.executable else {
            throw TestSupportError("nats-server is not installed (make deps installs it)")
        }
        process.executableURL = URL(fileURLWithPath: executable)
        process.arguments = arguments
        process.standardOutput = FileHandle.nullDevice
        process.standardError = FileHandle.nullDevice
        try process.run()
    }

    /// A loopback port no socket holds now: the kernel's choice for a socket bound to port 0.
    public static func unusedPort() throws -> Int {
        let socket = Glibc.socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard socket >= 0 else { throw TestSupportError("socket() failed: errno \(errno)") }
        defer { close(socket) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        address.sin_port = 0
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafeMutablePointer(to: &address) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                bind(socket, $0, length) == 0 && getsockname(socket, $0, &length) == 0
            }
        }
        guard bound else { throw TestSupportError("binding a loopback socket failed: errno \(errno)") }
        return Int(UInt16(bigEndian: address.sin_port))
    }

    /// The server's URL.
    public var url: String { "nats://127.0.0.1:\(port)" }

    /// `connect`'s result once it stops throwing (the server takes a moment to start), within
    /// `timeout` seconds.
    public func whenReady<T>(timeout: Double = 10, _ connect: () throws -> T) throws -> T {
        let deadline = Date().addingTimeInterval(timeout)
        while true {
            do {
                return try connect()
            } catch  where Date() < deadline && process.isRunning {
                Thread.sleep(forTimeInterval: 0.05)
            }
        }
    }

    deinit {
        process.terminate()
        process.waitUntilExit()
    }
}

/// A test's setup that could not be done.
public struct TestSupportError: Error, CustomStringConvertible {
    public var description: String
    public init(_ description: String) { self.description = description }
}
