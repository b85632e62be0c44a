import Foundation

/// A child process a suite ran to its end: its exit status and what it printed.
package struct WorkerRun: Sendable {
    /// The exit status, or 128 + the signal that ended it.
    package var status: Int32
    /// The signal that ended it, when one did.
    package var signal: Int32?
    package var standardOutput: String
    package var standardError: String

    /// The lines of standard output.
    package var lines: [Substring] { standardOutput.split(separator: "\n") }

    /// Runs `executable` with `arguments` and the extra `environment`, and waits for it to end;
    /// its outputs pass through files in `directory`.
    package static func run(
        _ executable: String, _ arguments: [String], environment: [String: String] = [:],
        in directory: URL = URL(fileURLWithPath: NSTemporaryDirectory())
    ) throws -> WorkerRun {
        try start(executable, arguments, environment: environment, in: directory).wait()
    }

    /// Starts `executable` with `arguments` and the extra `environment`; `wait()` gives its run.
    ///
    /// Both outputs go to files in `directory`, not pipes, so that a child printing a lot never
    /// blocks on a parent that reads only after it ended.
    package static func start(
        _ executable: String, _ arguments: [String], environment: [String: String] = [:], in directory: URL
    ) throws -> Running {
        let label = UUID().uuidString.prefix(8)
        let output = directory.appendingPathComponent("stdout-\(label)")
        let errors = directory.appendingPathComponent("stderr-\(label)")
        _ = FileManager.default.createFile(atPath: output.path, contents: nil)
        _ = FileManager.default.createFile(atPath: errors.path, contents: nil)
        let process = Process()
        process.executableURL = URL(fileURLWithPath: executable)
        process.arguments = arguments
        process.environment = ProcessInfo.processInfo.environment.merging(environment) { _, new in new }
        process.standardOutput = try FileHandle(forWritingTo: output)
        process.standardError = try FileHandle(forWritingTo: errors)
        try process.run()
        return Running(process: process, output: output, errors: errors)
    }

    /// A child process started by `start`.
    package final class Running {
        private let process: Process
        private let output: URL
        private let errors: URL

        init(process: Process, output: URL, errors: URL) {
            self.process = process
            self.output = output
            self.errors = errors
        }

        /// The process id.
        package var pid: Int32 { process.processIdentifier }

        /// Waits for the process to end and returns what it did; removes its output files.
        package func wait() -> WorkerRun {
            process.waitUntilExit()
            for handle in [process.standardOutput, process.standardError] { try? (handle as? FileHandle)?.close() }
            defer {
                try? FileManager.default.removeItem(at: output)
                try? FileManager.default.removeItem(at: errors)
            }
            let signal = process.terminationReason == .uncaughtSignal ? process.terminationStatus : nil
            return WorkerRun(
                status: signal.map { 128 + $0 } ?? process.terminationStatus, signal: signal,
                standardOutput: (try? String(contentsOf: output, encoding: .utf8)) ?? "",
                standardError: (try? String(contentsOf: errors, encoding: .utf8)) ?? "")
        }
    }
}
