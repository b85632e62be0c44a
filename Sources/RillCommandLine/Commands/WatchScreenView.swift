import Foundation
import Rill
import RillLocks

#if canImport(Glibc)
    import Glibc
#endif

/// The full-screen `rill watch` on a terminal: a ``WatchScreen`` that the watch's results and
/// changes update (from the thread they arrive on), drawn by a thread of its own, which also
/// reads the keys and follows resizes.
///
/// A frame is drawn whole, into one string written at once (cursor home, each line cleared, then
/// its text, as many lines as the screen has), and only when something changed: the results, the
/// size, the page. Nothing is drawn while the lock is held but the frame's text.
final class WatchScreenView: Sendable {
    private struct State {
        var screen: WatchScreen
        /// Whether the screen changed since the last frame.
        var dirty = true
    }

    private let state: Lock<State>

    /// A view of `query`'s results, not yet drawn; `connecting` when they come from a daemon.
    init(query: String, connecting: Bool) {
        let size = TerminalScreen.size
        var screen = WatchScreen(query: query, width: size.width, height: size.height)
        screen.colors = Terminal.wantsColors
        if connecting { screen.connection = "connecting" }
        state = Lock(State(screen: screen))
    }

    // MARK: - What the watch tells it

    /// New results: the first, or a daemon's reset.
    func results(_ rows: [QueryRow], sequence: UInt64) {
        update { $0.show(rows, sequence: sequence) }
    }

    /// A commit's change to the results.
    func change(_ change: ResultsChange<QueryRow>) {
        update { $0.apply(change) }
    }

    /// How the daemon's stream stands, in the header.
    func connection(_ text: String) {
        update { $0.connection = text }
    }

    private func update(_ body: (inout WatchScreen) -> Void) {
        state.withLock { state in
            body(&state.screen)
            state.dirty = true
        }
        TerminalScreen.wake()
    }

    // MARK: - Drawing

    /// Enters the full screen and draws on a thread of its own, for as long as the process runs;
    /// `q` ends it with status 0.
    func start() {
        TerminalScreen.enter()
        let thread = Thread { [self] in run() }
        thread.name = "rill.watch.screen"
        thread.start()
    }

    private func run() {
        var readsKeys = TerminalScreen.givesKeys
        var buffer = [UInt8](repeating: 0, count: 256)
        while true {
            draw()
            var descriptors = [
                pollfd(fd: TerminalScreen.wakeUp.read, events: Int16(POLLIN), revents: 0),
                pollfd(fd: readsKeys ? STDIN_FILENO : -1, events: Int16(POLLIN), revents: 0),
            ]
            guard poll(&descriptors, 2, -1) >= 0 else { continue }
            if descriptors[0].revents != 0 {
                while read(TerminalScreen.wakeUp.read, &buffer, buffer.count) > 0 {}
            }
            if TerminalScreen.takeRedraw() {
                let size = TerminalScreen.size
                state.withLock { state in
                    state.screen.resize(width: size.width, height: size.height)
                    state.dirty = true
                }
            }
            guard readsKeys, descriptors[1].revents != 0 else { continue }
            let count = read(STDIN_FILENO, &buffer, buffer.count)
            if count == 0 || (count < 0 && errno != EINTR && errno != EAGAIN) {
                // No more keys (the terminal went away): the watch goes on, drawing.
                readsKeys = false
                continue
            }
            guard count > 0 else { continue }
            for key in WatchKey.keys(in: Array(buffer[0..<count])) { press(key) }
        }
    }

    private func press(_ key: WatchKey) {
        if key == .quit {
            TerminalScreen.leave()
            _exit(ExitStatus.success)
        }
        state.withLock { state in
            switch key {
            case .nextPage: state.screen.nextPage()
            case .previousPage: state.screen.previousPage()
            case .firstPage: state.screen.firstPage()
            case .lastPage: state.screen.lastPage()
            case .lineDown: state.screen.lineDown()
            case .lineUp: state.screen.lineUp()
            case .redraw, .quit: break
            }
            state.dirty = true
        }
    }

    /// Draws a frame when the screen changed; the rows a change removed are shown in one frame.
    private func draw() {
        let lines: [String]? = state.withLock { state in
            guard state.dirty else { return nil }
            state.dirty = false
            let lines = state.screen.lines()
            state.screen.dropRemoved()
            return lines
        }
        guard let lines else { return }
        // Each line is cleared before its text, not after: a line as wide as the screen leaves
        // the cursor on its last cell, which clearing after would erase. A frame is as high as
        // the screen, so no line below it is left to clear.
        Terminal.write("\u{1B}[H" + lines.map { "\u{1B}[2K" + $0 }.joined(separator: "\r\n"))
    }
}
