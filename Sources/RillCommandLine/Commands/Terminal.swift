import Foundation
import Synchronization

#if canImport(Glibc)
    import Glibc
#endif

/// Standard output as `rill watch` uses it, and how an interrupt ends a watch.
///
/// A watch writes from the thread its changes arrive on, and a reader that stops reading blocks
/// that write. An interrupt must still end the watch at once, so it is not left to a queue or a
/// thread that the blocked write may be holding up: the signal handler itself ends the process
/// when no line is being written, and otherwise wakes the write, which waits for room in the
/// output and for an interrupt together (`poll`), writing no more than fits without blocking.
enum Terminal {
    /// Colors only on a terminal, and never when `NO_COLOR` is set to anything (no-color.org).
    static var wantsColors: Bool {
        isatty(STDOUT_FILENO) != 0 && (ProcessInfo.processInfo.environment["NO_COLOR"] ?? "").isEmpty
            && ProcessInfo.processInfo.environment["TERM"] != "dumb"
    }

    static var isStandardErrorATerminal: Bool { isatty(STDERR_FILENO) != 0 }

    // MARK: - Interrupts

    private static let idle = 0
    private static let writing = 1
    private static let interrupted = 2

    /// `idle`, `writing` (a write is under way) or `interrupted` (a signal came during a write):
    /// all that the signal handler and the writing thread share.
    private static let state = Atomic<Int>(0)
    /// The pipe through which the signal handler wakes a write waiting for its reader.
    private static let wakeUp = wakeUpPipe()

    /// A pipe for waking a thread from a signal handler: both ends non-blocking and closed on
    /// exec; (-1, -1) when none could be made.
    static func wakeUpPipe() -> (read: Int32, write: Int32) {
        var ends: [Int32] = [-1, -1]
        guard pipe(&ends) == 0 else { return (-1, -1) }
        for end in ends {
            _ = fcntl(end, F_SETFD, FD_CLOEXEC)
            _ = fcntl(end, F_SETFL, O_NONBLOCK)
        }
        return (ends[0], ends[1])
    }

    /// Makes SIGINT and SIGTERM end the process with status 0 at once, even while a write waits
    /// for a reader that does not read; the lines written before are whole, and so is the one
    /// being written unless its reader stopped reading in the middle of it.
    static func endOnInterrupt() {
        // Both are made now: a signal handler may only read them.
        _ = state.load(ordering: .sequentiallyConsistent)
        _ = wakeUp
        TerminalScreen.prepare()
        signal(SIGINT, onInterrupt)
        signal(SIGTERM, onInterrupt)
    }

    /// Only async-signal-safe work: atomic exchanges, write(2), tcsetattr(3), _exit(2).
    ///
    /// With no write under way, the state is marked interrupted before the screen is left, so
    /// that no write can start on another thread meanwhile (it finds the state not idle and
    /// ends the process too): a frame drawn after the screen was left would land on the normal
    /// screen.
    private static let onInterrupt: @convention(c) (Int32) -> Void = { _ in
        while true {
            if Terminal.state.compareExchange(
                expected: Terminal.writing, desired: Terminal.interrupted, ordering: .sequentiallyConsistent
            ).exchanged {
                var byte: UInt8 = 0
                _ = Glibc.write(Terminal.wakeUp.write, &byte, 1)
                return
            }
            if Terminal.state.compareExchange(
                expected: Terminal.idle, desired: Terminal.interrupted, ordering: .sequentiallyConsistent
            ).exchanged {
                Terminal.end()
            }
            // Interrupted already (a second signal while a line is finished): at once.
            if Terminal.state.load(ordering: .sequentiallyConsistent) == Terminal.interrupted { Terminal.end() }
        }
    }

    /// Ends the process at once with status 0, the full screen left first (async-signal-safe).
    private static func end() -> Never {
        TerminalScreen.leave()
        _exit(ExitStatus.success)
    }

    // MARK: - Writing

    /// Writes `text` (whole lines) to standard output; a reader that went away ends the process
    /// quietly, and so does an interrupt, at the end of a line or at once when the reader is
    /// not reading.
    static func write(_ text: String) {
        guard !text.isEmpty else { return }
        guard
            state.compareExchange(expected: idle, desired: writing, ordering: .sequentiallyConsistent).exchanged
        else { end() }
        let all = Array(text.utf8)
        var offset = 0
        var stopping = false
        while offset < all.count {
            let atLineStart = offset == 0 || all[offset - 1] == UInt8(ascii: "\n")
            if stopping, atLineStart { end() }
            var descriptors = [
                pollfd(fd: STDOUT_FILENO, events: Int16(POLLOUT), revents: 0),
                pollfd(fd: wakeUp.read, events: Int16(POLLIN), revents: 0),
            ]
            guard poll(&descriptors, 2, -1) >= 0 else {
                if errno == EINTR { continue }
                exit(ExitStatus.failure)
            }
            if descriptors[1].revents != 0 {
                // Interrupted: finish the line only while the reader takes it.
                stopping = true
                if descriptors[0].revents == 0 || atLineStart { end() }
            }
            guard descriptors[0].revents != 0 else { continue }
            // Room for PIPE_BUF bytes is what a pipe that polls writable has: this write does not block.
            var end = min(all.count, offset + Int(PIPE_BUF))
            if stopping, let newline = all[offset..<end].firstIndex(of: UInt8(ascii: "\n")) { end = newline + 1 }
            let written = all[offset..<end].withUnsafeBytes { Glibc.write(STDOUT_FILENO, $0.baseAddress, $0.count) }
            if written < 0 {
                if errno == EINTR || errno == EAGAIN { continue }
                // The reader went away (`rill watch … | head`): nothing more to say to it.
                exit(ExitStatus.success)
            }
            offset += written
        }
        guard
            state.compareExchange(expected: writing, desired: idle, ordering: .sequentiallyConsistent).exchanged
        else { end() }
    }
}
