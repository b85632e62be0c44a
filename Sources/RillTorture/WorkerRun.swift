import Foundation

/// A child process a suite ran to its end: its exit status and what it printed.
package struct WorkerRun: Sendable {
    /// The exit status, or 128 + the signal that ended it.
    package var status: Int32
    package var standardOutput: String
    package var standardError: String

    /// The lines of standard output.
    package var lines: [Substring] { standardOutput.split(separator: "\n") }

    /// Runs `executable` with `arguments` and the extra `environment`, and waits for it to end.
    ///
    /// Both outputs go to files, not pipes, so that a child printing a lot never blocks on a
    /// parent that reads only after it ended.
    package static func run(
        _ executable: String, _ arguments: [String], environment: [String: String] = [:], in directory: URL
    ) throws -> WorkerRun {
        let output = directory.appendingPathComponent("stdout-\(UUID().uuidString.prefix(8))")
        let errors = directory.appendingPathComponent("stderr-\(UUID().uuidString.prefix(8))")
        _ = FileManager.default.createFile(atPath: output.path, contents: nil)
        _ = FileManager.default.createFile(atPath: errors.path, contents: nil)
        defer {
            try? FileManager.default.removeItem(at: output)
            try? FileManager.default.removeItem(at: errors)
        }
        let process = Process()
        process.executableURL = URL(fileURLWithPath: executable)
        process.arguments = arguments
        process.environment = ProcessInfo.processInfo.environment.merging(environment) { _, new in new }
        let outputHandle = try FileHandle(forWritingTo: output)
        let errorHandle = try FileHandle(forWritingTo: errors)
        process.standardOutput = outputHandle
        process.standardError = errorHandle
        try process.run()
        process.waitUntilExit()
        try? outputHandle.close()
        try? errorHandle.close()
        let status =
            process.terminationReason == .uncaughtSignal ? 128 + process.terminationStatus : process.terminationStatus
        return WorkerRun(
            status: status,
            standardOutput: (try? String(contentsOf: output, encoding: .utf8)) ?? "",
            standardError: (try? String(contentsOf: errors, encoding: .utf8)) ?? "")
    }
}
