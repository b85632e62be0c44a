import Foundation

/// Where commands write: standard output, buffered, and standard error.
struct Output {
    private var buffer: [UInt8] = []

    mutating func line(_ text: String) {
        buffer.append(contentsOf: text.utf8)
        buffer.append(UInt8(ascii: "\n"))
        if buffer.count > 1 << 16 { flush() }
    }

    /// Writes `text` as it is (whole lines, each with its newline).
    mutating func write(_ text: String) {
        buffer.append(contentsOf: text.utf8)
        if buffer.count > 1 << 16 { flush() }
    }

    mutating func flush() {
        guard !buffer.isEmpty else { return }
        do {
            try FileHandle.standardOutput.write(contentsOf: buffer)
        } catch {
            // The reader went away (`rill log | head`): nothing more to say to it.
            exit(ExitStatus.success)
        }
        buffer.removeAll(keepingCapacity: true)
    }

    static func error(_ text: String) {
        FileHandle.standardError.write(Data(("rill: " + text + "\n").utf8))
    }
}
