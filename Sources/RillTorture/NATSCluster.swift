import Foundation
import Rill
import RillJetStream
import RillWorkloads

#if canImport(Glibc)
    import Glibc
#endif

/// Three `nats-server`s on loopback ports, one JetStream cluster (`rill`), each storing in a
/// directory of its own (also `rill-bench cluster`'s); the cluster suite kills one with SIGKILL and starts it again on the
/// same ports and directory.
package final class NATSCluster {
    /// One server: its name in the cluster, its ports and its storage.
    package struct Server {
        package var name: String
        package var clientPort: UInt16
        package var routePort: UInt16
        package var directory: String
    }

    package let servers: [Server]
    private let executable: String
    private let logs: URL
    private var processes: [LineProcess?]

    /// Where Debian installs the server, or the first on the PATH; nil when there is none.
    static var executable: String? {
        let path = (ProcessInfo.processInfo.environment["PATH"] ?? "").split(separator: ":").map(String.init)
        return (["/usr/sbin", "/usr/bin", "/usr/local/bin"] + path).map { $0 + "/nats-server" }.first {
            FileManager.default.isExecutableFile(atPath: $0)
        }
    }

    /// Chooses the servers' ports (six the kernel gave, all different) and directories in `root`.
    package init(root: URL, logs: URL, count: Int = 3) throws {
        guard let executable = Self.executable else {
            throw TortureUsage("nats-server is not installed (make deps installs it)")
        }
        self.executable = executable
        self.logs = logs
        var ports: Set<UInt16> = []
        while ports.count < 2 * count { ports.insert(try freeTCPPort()) }
        let chosen = Array(ports)
        servers = (0..<count).map { index in
            Server(
                name: "nats-\(index + 1)", clientPort: chosen[2 * index], routePort: chosen[2 * index + 1],
                directory: root.appendingPathComponent("nats-\(index + 1)").path)
        }
        processes = Array(repeating: nil, count: count)
    }

    deinit { stopAll() }

    /// The client URLs of every server, as a node connects with them.
    package var urls: [String] { servers.map { "nats://127.0.0.1:\($0.clientPort)" } }

    /// Starts every server.
    package func startAll() throws {
        for index in servers.indices { try start(index) }
    }

    /// Starts server `index` (again), with its routes to the others.
    func start(_ index: Int) throws {
        let server = servers[index]
        let routes = servers.indices.filter { $0 != index }.map { "nats://127.0.0.1:\(servers[$0].routePort)" }
        processes[index] = try LineProcess(
            executable,
            [
                "-n", server.name, "-js", "-sd", server.directory, "-a", "127.0.0.1", "-p", "\(server.clientPort)",
                "--cluster_name", "rill", "--cluster", "nats://127.0.0.1:\(server.routePort)",
                "--routes", routes.joined(separator: ","),
            ],
            log: logs.appendingPathComponent("\(server.name).log").path)
    }

    /// Sends SIGKILL to server `index`; returns its pid.
    @discardableResult
    func kill(_ index: Int) -> Int32? {
        guard let process = processes[index] else { return nil }
        let pid = process.pid
        process.stop(SIGKILL)
        processes[index] = nil
        return pid
    }

    /// Whether every server runs.
    var allRunning: Bool { processes.allSatisfy { $0?.isRunning == true } }

    /// The stream `stream` with three replicas, once the cluster has elected its meta leader and
    /// can place it (within 60 s).
    package func log(stream: String) throws -> JetStreamLog {
        let deadline = Date().addingTimeInterval(60)
        while true {
            do {
                return try JetStreamLog(servers: urls, stream: stream, replicas: 3, timeout: 2)
            } catch  where Date() < deadline {
                usleep(200_000)
            }
        }
    }

    /// Stops every server.
    package func stopAll() {
        for index in processes.indices { kill(index) }
    }
}
