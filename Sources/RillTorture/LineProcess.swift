import Foundation
import RillLocks

#if canImport(Glibc)
    import Glibc
#endif

/// A child process of a suite whose standard output is collected line by line, to be killed
/// at any moment.
///
/// Only complete lines count: a line the process was writing when it was killed (no newline yet)
/// is dropped, as a reader of its output would drop it. Standard error goes to a file, so that a
/// failure can be read afterwards.
package final class LineProcess: @unchecked Sendable {
    // Sendable: `state` is behind its lock; the process is only signalled and waited for.
    private let process = Process()
    private let output = Output()
    private let reader: Thread

    /// What the reader thread collected, shared with it.
    private final class Output: Sendable {
        let state = Lock(State())
    }

    private struct State {
        var lines: [String] = []
        var ended = false
    }

    /// Starts `executable arguments…`, its standard error appended to the file `log`.
    package init(_ executable: String, _ arguments: [String], log: String, environment: [String: String] = [:]) throws {
        process.executableURL = URL(fileURLWithPath: executable)
        process.arguments = arguments
        if !environment.isEmpty {
            process.environment = ProcessInfo.processInfo.environment.merging(environment) { $1 }
        }
        if !FileManager.default.fileExists(atPath: log) {
            _ = FileManager.default.createFile(atPath: log, contents: nil)
        }
        let errors = FileHandle(forWritingAtPath: log)
        errors?.seekToEndOfFile()
        process.standardError = errors ?? FileHandle.nullDevice
        process.standardInput = FileHandle.nullDevice
        let pipe = Pipe()
        process.standardOutput = pipe
        let handle = pipe.fileHandleForReading
        let collected = output
        reader = Thread {
            var pending: [UInt8] = []
            var chunk = [UInt8](repeating: 0, count: 65536)
            while true {
                let count = chunk.withUnsafeMutableBytes { read(handle.fileDescriptor, $0.baseAddress, $0.count) }
                if count < 0, errno == EINTR { continue }
                if count <= 0 { break }
                pending.append(contentsOf: chunk[0..<count])
                guard let last = pending.lastIndex(of: UInt8(ascii: "\n")) else { continue }
                let complete = pending[..<last].split(separator: UInt8(ascii: "\n"), omittingEmptySubsequences: false)
                let lines = complete.map { String(decoding: $0, as: UTF8.self) }
                pending.removeSubrange(...last)
                collected.state.withLock { $0.lines += lines }
            }
            collected.state.withLock { $0.ended = true }
        }
        try process.run()
        try? pipe.fileHandleForWriting.close()
        reader.start()
    }

    deinit {
        // A suite that failed before stopping it must not leave the process behind.
        if process.isRunning {
            kill(process.processIdentifier, SIGKILL)
            process.waitUntilExit()
        }
    }

    package var pid: Int32 { process.processIdentifier }

    package var isRunning: Bool { process.isRunning }

    /// The complete lines printed so far.
    package var lines: [String] { output.state.withLock { $0.lines } }

    /// The lines printed from index `start` on.
    package func lines(from start: Int) -> ArraySlice<String> {
        output.state.withLock { start < $0.lines.count ? $0.lines[start...] : [] }
    }

    package var lineCount: Int { output.state.withLock { $0.lines.count } }

    /// Waits (up to `timeout` seconds) until `condition` holds for the lines printed so far, or
    /// the output ended; returns whether it holds.
    package func wait(timeout: Double = 30, until condition: ([String]) -> Bool) -> Bool {
        let deadline = Date().addingTimeInterval(timeout)
        while Date() < deadline {
            let (lines, ended) = output.state.withLock { ($0.lines, $0.ended) }
            if condition(lines) { return true }
            if ended { return false }
            usleep(5_000)
        }
        return condition(lines)
    }

    /// Sends `signal`, waits for the process to end and for its last complete lines; returns its
    /// termination status.
    @discardableResult
    package func stop(_ signal: Int32 = SIGKILL) -> Int32 {
        if process.isRunning { kill(process.processIdentifier, signal) }
        return waitForExit()
    }

    /// Waits for the process to end by itself; returns its termination status.
    package func waitForExit() -> Int32 {
        process.waitUntilExit()
        // Children of the process could keep the pipe open: the last lines wait a bounded time.
        let deadline = Date().addingTimeInterval(5)
        while !output.state.withLock({ $0.ended }), Date() < deadline { usleep(1_000) }
        return process.terminationStatus
    }
}
