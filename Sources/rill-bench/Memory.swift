import Foundation

/// Resident memory from /proc/self/status, in bytes: the current size and the peak since the last reset.
enum Memory {
    static func resident() -> Int { field("VmRSS:") }
    static func peak() -> Int { field("VmHWM:") }

    /// Resets the peak to the current size (Linux: writing 5 to /proc/self/clear_refs).
    static func resetPeak() {
        guard let handle = FileHandle(forWritingAtPath: "/proc/self/clear_refs") else { return }
        try? handle.write(contentsOf: Data("5".utf8))
        try? handle.close()
    }

    private static func field(_ name: String) -> Int {
        guard let status = try? String(contentsOfFile: "/proc/self/status", encoding: .utf8) else { return 0 }
        for line in status.split(separator: "\n") where line.hasPrefix(name) {
            let digits = line.split(separator: " ").dropFirst().first.flatMap { Int($0) } ?? 0
            return digits * 1024
        }
        return 0
    }
}
