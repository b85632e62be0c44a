import Foundation
import RillHTTP

#if canImport(Glibc)
    import Glibc
#endif

/// A running `rill serve`.
package final class DaemonProcess: @unchecked Sendable {
    package let process = Process()
    package let socket: String
    package let log: String

    /// Starts `rill serve store arguments…`, its standard error into the file `log`, or into
    /// `standardError` when one is given.
    package init(
        store: String, arguments: [String] = [], environment: [String: String] = [:], log: String,
        standardError: Pipe? = nil
    ) throws {
        socket = store + "/rill.sock"
        self.log = log
        process.executableURL = buildProductsDirectory.appendingPathComponent("rill")
        process.arguments = ["serve", store] + arguments
        var env = ProcessInfo.processInfo.environment
        for (key, value) in environment { env[key] = value }
        process.environment = env
        _ = FileManager.default.createFile(atPath: log, contents: nil)
        process.standardError = standardError ?? FileHandle(forWritingAtPath: log)
        process.standardOutput = FileHandle.nullDevice
        try process.run()
        // Until the socket accepts a connection: its file alone may be one a killed daemon left,
        // which this one has yet to replace.
        let deadline = Date().addingTimeInterval(20)
        while Date() < deadline, process.isRunning {
            if let probe = try? Socket.connect(.unix(socket)) {
                close(probe)
                break
            }
            usleep(10_000)
        }
        // Give the accept thread a moment.
        usleep(50_000)
    }

    deinit {
        // A test that failed before stopping it must not leave the daemon behind.
        if process.isRunning {
            kill(process.processIdentifier, SIGKILL)
            process.waitUntilExit()
        }
    }

    package func stop(_ signal: Int32 = SIGTERM) -> Int32 {
        kill(process.processIdentifier, signal)
        process.waitUntilExit()
        return process.terminationStatus
    }

    package var logText: String { (try? String(contentsOfFile: log, encoding: .utf8)) ?? "" }

    /// Whether the log comes to contain `text` within `seconds`. A running daemon writes its log
    /// from a thread of its own, so a line comes some time after what it tells of.
    package func logs(_ text: String, within seconds: Double = 20) -> Bool {
        let deadline = Date().addingTimeInterval(seconds)
        while !logText.contains(text) {
            guard Date() < deadline else { return false }
            usleep(10_000)
        }
        return true
    }
}
