import Foundation

#if canImport(Glibc)
    import Glibc
#endif

/// Lines on their way to a file descriptor (the daemon's standard error), written by a thread of
/// their own so that logging never blocks or kills the thread that logs.
///
/// Standard error may be a pipe that nobody reads (it fills and `write` blocks), a pipe whose
/// reader went away (`write` fails with `EPIPE`; `rill` ignores SIGPIPE), or closed. Callers
/// only append to a bounded buffer; when it is full the line is dropped and counted, and the
/// count is logged once there is room again. A descriptor that fails is given up: lines after
/// it are discarded.
final class LogWriter: @unchecked Sendable {
    // Sendable: the mutable state is behind `condition`; `fd` and `capacity` are immutable.
    private let fd: Int32
    private let capacity: Int
    private let condition = NSCondition()
    private var pending: [UInt8] = []
    private var dropped = 0
    private var writing = false
    private var broken = false
    private var started = false

    /// A writer to `fd` holding at most `capacity` bytes not yet written.
    init(fd: Int32, capacity: Int) {
        self.fd = fd
        self.capacity = capacity
    }

    /// Queues `line` (with its newline); never waits for the descriptor.
    func write(_ line: String) {
        condition.lock()
        defer { condition.unlock() }
        guard !broken else { return }
        if pending.count + line.utf8.count > capacity {
            dropped += 1
            return
        }
        pending.append(contentsOf: line.utf8)
        if !started {
            started = true
            let thread = Thread { [self] in drain() }
            thread.name = "rill.log"
            thread.stackSize = 256 << 10
            thread.start()
        }
        condition.signal()
    }

    /// Waits until every queued line is written, or `timeout` seconds have passed (standard
    /// error may never be read): what a process that is about to exit says last gets out.
    func flush(timeout: Double) {
        let deadline = Date().addingTimeInterval(timeout)
        condition.lock()
        defer { condition.unlock() }
        while !broken, !pending.isEmpty || writing || dropped > 0 {
            if !condition.wait(until: deadline) { return }
        }
    }

    private func drain() {
        condition.lock()
        while true {
            while pending.isEmpty, dropped == 0 { condition.wait() }
            var bytes = pending
            pending = []
            if dropped > 0 {
                // The lines dropped came after those queued: the notice goes where they were.
                bytes += Array("(\(dropped) log line(s) dropped: standard error was not read in time)\n".utf8)
                dropped = 0
            }
            writing = true
            condition.unlock()
            let written = Self.writeAll(fd, bytes)
            condition.lock()
            writing = false
            if !written {
                broken = true
                pending = []
                dropped = 0
            }
            condition.broadcast()
            if broken {
                condition.unlock()
                return
            }
        }
    }

    /// Writes all of `bytes`; false when the descriptor fails (a reader gone, a closed descriptor).
    private static func writeAll(_ fd: Int32, _ bytes: [UInt8]) -> Bool {
        var offset = 0
        while offset < bytes.count {
            let count = bytes.withUnsafeBytes { Glibc.write(fd, $0.baseAddress! + offset, $0.count - offset) }
            if count >= 0 {
                offset += count
                continue
            }
            switch errno {
            case EINTR:
                continue
            case EAGAIN, EWOULDBLOCK:
                // Someone made the descriptor non-blocking: wait for room on this thread only.
                var entry = pollfd(fd: fd, events: Int16(POLLOUT), revents: 0)
                _ = poll(&entry, 1, 1000)
            default:
                return false
            }
        }
        return true
    }
}
