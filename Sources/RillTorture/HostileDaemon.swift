import Foundation
import RillHTTP

#if canImport(Glibc)
    import Glibc
#endif

/// The `rill serve` process the `hostile` suite attacks, and what `/proc` says about it: its
/// resident memory and its open descriptors.
final class HostileDaemon: @unchecked Sendable {
    // Sendable: immutable after init; what it reports is read from `/proc`.
    let process = Process()
    let socket: String
    let port: UInt16
    let log: URL

    /// Starts `rill serve store --listen 127.0.0.1:port arguments…` with `token`, its standard
    /// error into `log`, and waits until it answers on its socket.
    init(rill: String, store: String, port: UInt16, token: String, arguments: [String], log: URL) throws {
        socket = store + "/rill.sock"
        self.port = port
        self.log = log
        process.executableURL = URL(fileURLWithPath: rill)
        process.arguments = ["serve", store, "--listen", "127.0.0.1:\(port)"] + arguments
        var environment = ProcessInfo.processInfo.environment
        environment["RILL_TOKEN"] = token
        process.environment = environment
        _ = FileManager.default.createFile(atPath: log.path, contents: nil)
        process.standardError = try FileHandle(forWritingTo: log)
        process.standardOutput = FileHandle.nullDevice
        try process.run()
        let deadline = Date().addingTimeInterval(30)
        while Date() < deadline, process.isRunning {
            if let probe = try? HostileConnection(.unix(socket)), probe.request("GET", "/v1/health")?.status == 200 {
                return
            }
            usleep(20_000)
        }
        throw TortureUsage("rill serve did not start: \(logText.suffix(2000))")
    }

    deinit {
        if process.isRunning {
            kill(process.processIdentifier, SIGKILL)
            process.waitUntilExit()
        }
    }

    /// The daemon's resident memory in bytes (`VmRSS` of `/proc/<pid>/status`), 0 once it is gone.
    var residentBytes: Int {
        guard let status = try? String(contentsOfFile: "/proc/\(process.processIdentifier)/status", encoding: .utf8),
            let line = status.split(separator: "\n").first(where: { $0.hasPrefix("VmRSS:") })
        else { return 0 }
        let kilobytes = line.split(separator: " ").compactMap { Int($0) }.first ?? 0
        return kilobytes << 10
    }

    /// The daemon's open descriptors (the entries of `/proc/<pid>/fd`).
    var openDescriptors: Int {
        (try? FileManager.default.contentsOfDirectory(atPath: "/proc/\(process.processIdentifier)/fd").count) ?? 0
    }

    /// What each open descriptor of the daemon is (`socket:[…]`, a path, `pipe:[…]`), for a problem's sentence.
    var descriptorTargets: [String] {
        let directory = "/proc/\(process.processIdentifier)/fd"
        let names = (try? FileManager.default.contentsOfDirectory(atPath: directory)) ?? []
        return names.compactMap { try? FileManager.default.destinationOfSymbolicLink(atPath: directory + "/" + $0) }
    }

    /// The daemon's threads (`Threads` of `/proc/<pid>/status`).
    var threads: Int {
        guard let status = try? String(contentsOfFile: "/proc/\(process.processIdentifier)/status", encoding: .utf8),
            let line = status.split(separator: "\n").first(where: { $0.hasPrefix("Threads:") })
        else { return 0 }
        return line.split(separator: "\t").compactMap { Int($0.trimmingCharacters(in: .whitespaces)) }.first ?? 0
    }

    var isRunning: Bool { process.isRunning }

    /// Stops it with SIGTERM and returns its exit status, or nil when it did not exit within 30 s
    /// (it is then killed).
    func stop() -> Int32? {
        kill(process.processIdentifier, SIGTERM)
        let deadline = Date().addingTimeInterval(30)
        while process.isRunning, Date() < deadline { usleep(20_000) }
        guard !process.isRunning else {
            kill(process.processIdentifier, SIGKILL)
            process.waitUntilExit()
            return nil
        }
        return process.terminationStatus
    }

    var logText: String { (try? String(contentsOf: log, encoding: .utf8)) ?? "" }
}
