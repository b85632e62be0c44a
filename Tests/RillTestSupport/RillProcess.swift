import Foundation
import RillLocks

#if canImport(Glibc)
    import Glibc
#endif

/// A running `rill` whose standard output is collected line by line.
package final class RillProcess: @unchecked Sendable {
    // Sendable: `lines` is behind its lock; the process is only signalled and waited for.
    package let process: Process
    private let lines = Lock<[String]>([])

    package init(_ arguments: [String]) throws {
        let process = Process()
        process.executableURL = buildProductsDirectory.appendingPathComponent("rill")
        process.arguments = arguments
        let output = Pipe()
        process.standardOutput = output
        process.standardError = FileHandle.standardError
        try process.run()
        self.process = process
        let handle = output.fileHandleForReading
        let reader = Thread { [self] in
            var pending = Data()
            while true {
                let data = handle.availableData
                if data.isEmpty { break }
                pending.append(data)
                while let newline = pending.firstIndex(of: UInt8(ascii: "\n")) {
                    let line = String(decoding: pending[pending.startIndex..<newline], as: UTF8.self)
                    pending.removeSubrange(pending.startIndex...newline)
                    lines.withLock { $0.append(line) }
                }
            }
        }
        reader.start()
    }

    deinit {
        // A test that failed before stopping it must not leave the process behind.
        if process.isRunning {
            kill(process.processIdentifier, SIGKILL)
            process.waitUntilExit()
        }
    }

    package var output: [String] { lines.withLock { $0 } }

    /// Waits (up to 30 s) until `condition` holds for the lines printed so far.
    package func wait(until condition: ([String]) -> Bool) -> Bool {
        let deadline = Date().addingTimeInterval(30)
        while Date() < deadline {
            if condition(output) { return true }
            usleep(10_000)
        }
        return condition(output)
    }

    package func stop(_ signal: Int32) -> Int32 {
        kill(process.processIdentifier, signal)
        process.waitUntilExit()
        return process.terminationStatus
    }
}
