import Foundation

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
        guard let executable = Self.executable else {
            throw TestSupportError("nats-server is not installed (make deps installs it)")
        }
        port = Int.random(in: 20_000...45_000)
        process.executableURL = URL(fileURLWithPath: executable)
        process.arguments = ["-js", "-a", "127.0.0.1", "-p", "\(port)", "-sd", directory.path("jetstream")]
        process.standardOutput = FileHandle.nullDevice
        process.standardError = FileHandle.nullDevice
        try process.run()
    }

    /// The server's URL.
    public var url: String { "nats://127.0.0.1:\(port)" }

    /// `connect`'s result once it stops throwing (the server takes a moment to start), within 10 s.
    public func whenReady<T>(_ connect: () throws -> T) throws -> T {
        let deadline = Date().addingTimeInterval(10)
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
