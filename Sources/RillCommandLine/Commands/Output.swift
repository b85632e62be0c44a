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

extension Output {
    /// A size for a person: `300.0 KiB (307200 bytes)`, or `512 bytes`.
    static func byteCount(_ bytes: Int) -> String {
        let units = ["bytes", "KiB", "MiB", "GiB", "TiB"]
        var value = Double(bytes)
        var unit = 0
        while value >= 1024, unit < units.count - 1 {
            value /= 1024
            unit += 1
        }
        return unit == 0 ? "\(bytes) bytes" : String(format: "%.1f %@ (%d bytes)", value, units[unit], bytes)
    }
}
