import Foundation
import Rill
import RillLocks

#if canImport(Glibc)
    import Glibc
#endif

/// Draws the library's index-build progress on standard error, when it is a terminal, for builds that take more
/// than a second: `building index Book(title): 2048 of 10000 records (20%)`, then the time the build took.
final class StoreProgressBar: Sendable {
    private struct State {
        var start = Date()
        var lastReport = Date.distantPast
        var shown = false
    }

    private let state = Lock(State())

    /// A handler for `Store` that draws the bar, or nil (silence) when standard error is not a terminal.
    static func handlerIfTerminal() -> (@Sendable (StoreProgress) -> Void)? {
        guard isatty(STDERR_FILENO) != 0 else { return nil }
        let bar = StoreProgressBar()
        return { bar.show($0) }
    }

    func show(_ progress: StoreProgress) {
        let label = progress.phase.description
        let text: String? = state.withLock { state in
            let now = Date()
            if progress.completed == 0 { state = State(start: now) }
            if progress.isFinished {
                guard state.shown else { return nil }
                state.shown = false
                let seconds = String(format: "%.1f", now.timeIntervalSince(state.start))
                return "\r\(label): \(progress.completed) \(progress.unit) in \(seconds) s\u{1B}[K\n"
            }
            guard now.timeIntervalSince(state.start) > 1, now.timeIntervalSince(state.lastReport) > 0.25 else {
                return nil
            }
            state.lastReport = now
            state.shown = true
            let percent = progress.total > 0 ? progress.completed * 100 / progress.total : 100
            return "\r\(label): \(progress.completed) of \(progress.total) \(progress.unit) (\(percent)%)"
        }
        if let text { FileHandle.standardError.write(Data(text.utf8)) }
    }
}
