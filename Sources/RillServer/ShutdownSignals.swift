import Foundation
import RillLocks

#if canImport(Glibc)
    import Glibc
#endif

/// The write end of the pipe that SIGTERM and SIGINT are written to (see `ShutdownSignals`).
/// A signal handler can reach nothing but globals.
private nonisolated(unsafe) var shutdownSignalPipe: Int32 = -1

/// SIGTERM and SIGINT, taken over for the daemon before its sockets exist.
///
/// A client (or a script) sees the daemon once its socket file exists, and may send it a signal
/// at once; no such signal may be lost, nor end the daemon without its clean stop. The handler
/// is installed with `signal(2)`, which holds when it returns (a dispatch signal source starts
/// to listen only some time after it is resumed, and a signal ignored until then is lost). It
/// writes the signal's number to a pipe, which a thread of its own reads. A signal received
/// before a server is given (``stopping(_:)``) is remembered, and stops that server as soon as
/// it is.
package final class ShutdownSignals: Sendable {
    private struct State {
        var received: Int32?
        var server: Server?
    }

    private let state = Lock(State())

    /// Takes over SIGTERM and SIGINT for this process; call it once.
    package init() {
        var ends: [Int32] = [-1, -1]
        guard pipe(&ends) == 0 else {
            // Without a pipe the default actions stay: a signal still ends the process.
            return
        }
        for end in ends { _ = fcntl(end, F_SETFD, FD_CLOEXEC) }
        // A full pipe must not block a handler: one byte a signal is more than enough.
        _ = fcntl(ends[1], F_SETFL, fcntl(ends[1], F_GETFL) | O_NONBLOCK)
        shutdownSignalPipe = ends[1]
        let reading = ends[0]
        let thread = Thread { [self] in
            var number: UInt8 = 0
            while true {
                let count = read(reading, &number, 1)
                if count == 1 {
                    received(Int32(number))
                } else if count < 0, errno == EINTR {
                    continue
                } else {
                    return
                }
            }
        }
        thread.name = "rill.signals"
        thread.start()
        for number in [SIGTERM, SIGINT] {
            _ = signal(number) { number in
                var byte = UInt8(truncatingIfNeeded: number)
                _ = write(shutdownSignalPipe, &byte, 1)
            }
        }
    }

    /// Stops `server` on the next signal, or at once when one has already come.
    package func stopping(_ server: Server) {
        let received = state.withLock { state -> Int32? in
            state.server = server
            return state.received
        }
        if let received { stop(server, on: received) }
    }

    private func received(_ number: Int32) {
        let server = state.withLock { state -> Server? in
            if state.received == nil { state.received = number }
            return state.server
        }
        if let server { stop(server, on: number) }
    }

    private func stop(_ server: Server, on number: Int32) {
        Log.info("received \(number == SIGTERM ? "SIGTERM" : "SIGINT"): shutting down")
        server.stop()
    }
}
