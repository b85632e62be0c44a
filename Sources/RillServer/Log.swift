import Foundation
import Synchronization

#if canImport(Glibc)
    import Glibc
#endif

/// The daemon's log: one line per event on standard error, with its level.
///
/// Lines go through a ``LogWriter``: logging never blocks the caller and never fails it, whatever
/// became of standard error (a full pipe, a reader gone, closed). Under systemd (`JOURNAL_STREAM` set) each line starts with the syslog priority (`<6>`), which
/// journald reads as the level and strips; elsewhere with an ISO-8601 time and the level's name.
package enum Log {
    /// How much a line matters; its raw value is the syslog priority.
    package enum Level: Int, Comparable, Sendable {
        case debug = 7
        case info = 6
        case warning = 4
        case error = 3

        /// Less severe first: `debug < info < warning < error`.
        package static func < (lhs: Level, rhs: Level) -> Bool { lhs.rawValue > rhs.rawValue }

        /// The level's name, as `--log-level` takes it.
        package var name: String {
            switch self {
            case .debug: "debug"
            case .info: "info"
            case .warning: "warning"
            case .error: "error"
            }
        }

        /// The level named `name`, or nil.
        package init?(name: String) {
            switch name {
            case "debug": self = .debug
            case "info": self = .info
            case "warning": self = .warning
            case "error": self = .error
            default: return nil
            }
        }
    }

    private static let minimum = Atomic<Int>(Level.info.rawValue)
    private static let journal = ProcessInfo.processInfo.environment["JOURNAL_STREAM"] != nil
    private static let writer = LogWriter(fd: STDERR_FILENO, capacity: 256 << 10)

    /// Logs lines of `level` and above from now on.
    package static func setLevel(_ level: Level) { minimum.store(level.rawValue, ordering: .relaxed) }

    /// Logs a debug line (the message is built only when it is logged).
    package static func debug(_ message: @autoclosure () -> String) { write(.debug, message) }
    /// Logs an info line.
    package static func info(_ message: @autoclosure () -> String) { write(.info, message) }
    /// Logs a warning line.
    package static func warning(_ message: @autoclosure () -> String) { write(.warning, message) }
    /// Logs an error line.
    package static func error(_ message: @autoclosure () -> String) { write(.error, message) }

    private static func write(_ level: Level, _ message: () -> String) {
        guard level.rawValue <= minimum.load(ordering: .relaxed) else { return }
        let text = message().replacingOccurrences(of: "\n", with: " ")
        let line =
            journal
            ? "<\(level.rawValue)>\(text)\n"
            : "\(Date().formatted(.iso8601)) \(level.name) \(text)\n"
        writer.write(line)
    }

    /// Waits up to `timeout` seconds for the lines logged so far to be written.
    package static func flush(timeout: Double = 1) { writer.flush(timeout: timeout) }
}
