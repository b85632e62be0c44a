import Foundation
import Synchronization

#if canImport(Glibc)
    import Glibc
#endif

/// The terminal as a full screen: the alternate screen, no cursor, keys read one by one
/// (no ICANON, no ECHO; ISIG stays, so Ctrl-C is still SIGINT), and everything as it was on
/// the way out — at exit, on SIGINT and SIGTERM (``Terminal``'s handler leaves before it
/// ends the process), and around a stop (SIGTSTP, then SIGCONT enters again and asks for a
/// redraw). A resize (SIGWINCH) asks for a redraw too.
///
/// The signal handlers share only what is made before any is installed: atomics, a pipe, the
/// saved and raw terminal modes, and the bytes that enter and leave. They do only
/// async-signal-safe work: atomics, write(2), tcsetattr(3), signal(2), raise(3).
enum TerminalScreen {
    /// Whether the screen is entered (the terminal is not as it was).
    private static let entered = Atomic<Bool>(false)
    /// Whether the screen was left for a stop, to be entered again on SIGCONT.
    private static let stopped = Atomic<Bool>(false)
    /// A redraw is asked for (resize, continue); the drawing thread takes it.
    private static let redrawAsked = Atomic<Bool>(false)
    /// The terminal's modes as they were; made before the screen is entered.
    nonisolated(unsafe) private static let original = UnsafeMutablePointer<termios>.allocate(capacity: 1)
    nonisolated(unsafe) private static let keys = UnsafeMutablePointer<termios>.allocate(capacity: 1)
    /// Whether standard input is the terminal whose modes are changed.
    private static let readsKeys = Atomic<Bool>(false)
    /// Alternate screen, cursor hidden, no autowrap (a line never spills), cleared.
    nonisolated(unsafe) private static let enterBytes = bytes("\u{1B}[?1049h\u{1B}[?25l\u{1B}[?7l\u{1B}[H\u{1B}[2J")
    /// Colors off, autowrap and cursor back, the normal screen.
    nonisolated(unsafe) private static let leaveBytes = bytes("\u{1B}[0m\u{1B}[?7h\u{1B}[?25h\u{1B}[?1049l")

    /// The pipe that wakes the drawing thread: from a handler, or when the results change.
    static let wakeUp = Terminal.wakeUpPipe()

    /// Whether `rill watch` draws a full screen: standard output is a terminal that can
    /// (`TERM` set and not `dumb`).
    static var isAvailable: Bool {
        let term = ProcessInfo.processInfo.environment["TERM"] ?? ""
        return isatty(STDOUT_FILENO) != 0 && !term.isEmpty && term != "dumb"
    }

    /// The terminal's size in cells (80 × 24 when it does not say).
    static var size: (width: Int, height: Int) {
        var size = winsize()
        guard ioctl(STDOUT_FILENO, UInt(TIOCGWINSZ), &size) == 0, size.ws_col > 0, size.ws_row > 0 else {
            return (80, 24)
        }
        return (Int(size.ws_col), Int(size.ws_row))
    }

    // MARK: - Entering and leaving

    /// Makes what ``leave()`` reads, so that a signal handler may call it whether or not the
    /// screen is ever entered.
    static func prepare() {
        _ = entered.load(ordering: .sequentiallyConsistent)
        _ = readsKeys.load(ordering: .sequentiallyConsistent)
        _ = original
        _ = leaveBytes
    }

    /// Enters the full screen and installs the handlers that leave it; call once, after
    /// ``Terminal/endOnInterrupt()``.
    static func enter() {
        // Everything a handler touches is made now.
        prepare()
        _ = wakeUp
        _ = enterBytes
        _ = leaveBytes
        _ = redrawAsked.load(ordering: .sequentiallyConsistent)
        _ = stopped.load(ordering: .sequentiallyConsistent)
        if isatty(STDIN_FILENO) != 0, tcgetattr(STDIN_FILENO, original) == 0 {
            keys.pointee = original.pointee
            keys.pointee.c_lflag &= ~tcflag_t(ICANON | ECHO)
            keys.pointee.c_cc.5 = 0  // VTIME
            keys.pointee.c_cc.6 = 1  // VMIN
            readsKeys.store(true, ordering: .sequentiallyConsistent)
        }
        signal(SIGWINCH, onResize)
        signal(SIGTSTP, onStop)
        signal(SIGCONT, onContinue)
        enterNow()
        // An exit from any thread (a failure, the reader gone) leaves it too.
        atexit { TerminalScreen.leave() }
    }

    /// Leaves the full screen if it is entered: the normal screen and modes back. Safe in a
    /// signal handler.
    static func leave() {
        guard entered.exchange(false, ordering: .sequentiallyConsistent) else { return }
        if readsKeys.load(ordering: .sequentiallyConsistent) { _ = tcsetattr(STDIN_FILENO, TCSAFLUSH, original) }
        writeAll(leaveBytes)
    }

    /// Whether standard input gives keys (it is the terminal).
    static var givesKeys: Bool { readsKeys.load(ordering: .sequentiallyConsistent) }

    /// Takes the redraw asked for by a handler, if any.
    static func takeRedraw() -> Bool { redrawAsked.exchange(false, ordering: .sequentiallyConsistent) }

    /// Wakes the drawing thread (safe in a signal handler).
    static func wake() {
        var byte: UInt8 = 0
        _ = Glibc.write(wakeUp.write, &byte, 1)
    }

    private static func enterNow() {
        if readsKeys.load(ordering: .sequentiallyConsistent) { _ = tcsetattr(STDIN_FILENO, TCSAFLUSH, keys) }
        writeAll(enterBytes)
        entered.store(true, ordering: .sequentiallyConsistent)
    }

    // MARK: - Signals

    private static let onResize: @convention(c) (Int32) -> Void = { _ in
        TerminalScreen.redrawAsked.store(true, ordering: .sequentiallyConsistent)
        TerminalScreen.wake()
    }

    /// Leaves the screen, then stops as SIGTSTP would have (it is delivered once this returns).
    private static let onStop: @convention(c) (Int32) -> Void = { _ in
        if TerminalScreen.entered.load(ordering: .sequentiallyConsistent) {
            TerminalScreen.leave()
            TerminalScreen.stopped.store(true, ordering: .sequentiallyConsistent)
        }
        signal(SIGTSTP, SIG_DFL)
        raise(SIGTSTP)
    }

    private static let onContinue: @convention(c) (Int32) -> Void = { _ in
        signal(SIGTSTP, TerminalScreen.onStop)
        if TerminalScreen.stopped.exchange(false, ordering: .sequentiallyConsistent) { TerminalScreen.enterNow() }
        TerminalScreen.redrawAsked.store(true, ordering: .sequentiallyConsistent)
        TerminalScreen.wake()
    }

    // MARK: - Helpers

    private static func bytes(_ text: String) -> UnsafeMutableBufferPointer<UInt8> {
        let buffer = UnsafeMutableBufferPointer<UInt8>.allocate(capacity: text.utf8.count)
        _ = buffer.initialize(from: text.utf8)
        return buffer
    }

    private static func writeAll(_ buffer: UnsafeMutableBufferPointer<UInt8>) {
        var offset = 0
        while offset < buffer.count {
            let written = Glibc.write(STDOUT_FILENO, buffer.baseAddress! + offset, buffer.count - offset)
            if written < 0, errno == EINTR { continue }
            guard written > 0 else { return }
            offset += written
        }
    }
}
