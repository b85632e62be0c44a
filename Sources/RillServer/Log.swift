import Foundation
import Rill
import RillService
import Synchronization

#if canImport(Glibc)
    import Glibc
#endif

/// The daemon's log: one line per event on standard error, with its level.
///
/// Lines go through a ``LogWriter``: logging never blocks the caller and never fails it, whatever
/// became of standard error (a full pipe, a reader gone, closed). Under systemd (`JOURNAL_STREAM`
/// set) each line starts with the syslog priority (`<6>`), which journald reads as the level and
/// strips; elsewhere with an ISO-8601 time and the level's name. In the JSON format
/// (``setFormat(_:)``) each line is one JSON object instead, with the time and the level in it
/// (and still the priority first under systemd). A line about a request carries its
/// ``LogContext``: the request id and the client, then the method, path, status and duration.
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

    /// How lines are written.
    package enum Format: Int, Sendable {
        /// `<time> <level> [<request id> <client>] <message>`.
        case text = 0
        /// One JSON object a line: `time`, `level`, `requestId`, `client`, `method`, `path`,
        /// `status`, `milliseconds` (those a line has), `message`.
        case json = 1

        /// The format named `name` (`text`, `json`), or nil.
        package init?(name: String) {
            switch name {
            case "text": self = .text
            case "json": self = .json
            default: return nil
            }
        }
    }

    private static let minimum = Atomic<Int>(Level.info.rawValue)
    private static let format = Atomic<Int>(Format.text.rawValue)
    private static let journal = ProcessInfo.processInfo.environment["JOURNAL_STREAM"] != nil
    private static let writer = LogWriter(fd: STDERR_FILENO, capacity: 256 << 10)

    /// Logs lines of `level` and above from now on.
    package static func setLevel(_ level: Level) { minimum.store(level.rawValue, ordering: .relaxed) }

    /// Writes lines in `format` from now on.
    package static func setFormat(_ format: Format) { self.format.store(format.rawValue, ordering: .relaxed) }

    /// Logs a debug line (the message is built only when it is logged).
    package static func debug(_ message: @autoclosure () -> String, _ context: LogContext? = nil) {
        write(.debug, message, context)
    }
    /// Logs an info line.
    package static func info(_ message: @autoclosure () -> String, _ context: LogContext? = nil) {
        write(.info, message, context)
    }
    /// Logs a warning line.
    package static func warning(_ message: @autoclosure () -> String, _ context: LogContext? = nil) {
        write(.warning, message, context)
    }
    /// Logs an error line.
    package static func error(_ message: @autoclosure () -> String, _ context: LogContext? = nil) {
        write(.error, message, context)
    }

    private static func write(_ level: Level, _ message: () -> String, _ context: LogContext?) {
        guard level.rawValue <= minimum.load(ordering: .relaxed) else { return }
        writer.write(
            line(level, message(), context, format: Format(rawValue: format.load(ordering: .relaxed)) ?? .text))
    }

    /// The line logged for `message` (with its newline).
    static func line(
        _ level: Level, _ message: String, _ context: LogContext?, format: Format, date: Date = Date()
    )
        -> String
    {
        let prefix = journal ? "<\(level.rawValue)>" : ""
        switch format {
        case .text:
            let text = message.replacingOccurrences(of: "\n", with: " ")
            let tagged = context.map { "[\($0.requestID) \($0.client)] " + text } ?? text
            return journal
                ? "\(prefix)\(tagged)\n" : "\(ISO8601Time.string(date, fractionDigits: 0)) \(level.name) \(tagged)\n"
        case .json:
            var fields: [(String, String)] = [
                ("time", JSONText.string(ISO8601Time.string(date, fractionDigits: 3))),
                ("level", JSONText.string(level.name)),
            ]
            if let context { fields += context.jsonFields }
            fields.append(("message", JSONText.string(message)))
            return prefix + "{" + fields.map { "\(JSONText.string($0.0)):\($0.1)" }.joined(separator: ",") + "}\n"
        }
    }

    /// Waits up to `timeout` seconds for the lines logged so far to be written.
    package static func flush(timeout: Double = 1) { writer.flush(timeout: timeout) }
}
