import Dispatch
import Rill
import RillHTTP
import RillLocks

#if canImport(Glibc)
    import Glibc
#endif

/// The events of one subscriber, queued by the follower and written by the connection.
///
/// The connection waits for events and for its client at once (``next(watching:timeout:)``
/// polls the socket beside the queue's wake-up pipe), so that a client that goes away is noticed
/// at once — its connection slot and its live query freed — not at the next write.
final class Subscription: Sendable {
    enum Item {
        case event(RecordLiveQuery.Event)
        /// The queue overflowed and was dropped: send a fresh snapshot.
        case reset
    }

    /// What ``next(watching:timeout:)`` gives.
    enum Next {
        /// The queued items.
        case items([Item])
        /// Nothing for `timeout` seconds.
        case idle
        /// The subscription was closed (the daemon stops) or the client went away.
        case ended
    }

    private struct State {
        var items: [Item] = []
        var closed = false
        /// A byte is in the pipe (and not yet read back).
        var signaled = false
    }

    private let state = Lock(State())
    private let limit: Int
    /// The wake-up pipe: read end, write end (both non-blocking).
    private let wake: (read: Int32, write: Int32)

    /// - Throws: ``SocketError`` when the pipe cannot be made (out of descriptors).
    init(limit: Int) throws {
        self.limit = max(limit, 1)
        var fds: [Int32] = [0, 0]
        guard pipe(&fds) == 0 else { throw SocketError("pipe") }
        for fd in fds {
            _ = fcntl(fd, F_SETFD, FD_CLOEXEC)
            _ = fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK)
        }
        wake = (fds[0], fds[1])
    }

    deinit {
        Glibc.close(wake.read)
        Glibc.close(wake.write)
    }

    /// Queues an event; never blocks for long (the follower calls it).
    func push(_ event: RecordLiveQuery.Event) {
        state.withLock { state in
            if state.items.count >= limit {
                state.items = [.reset]
            } else {
                state.items.append(.event(event))
            }
            signal(&state)
        }
    }

    /// Ends the subscription: the connection's next wait returns `.ended`.
    func close() {
        state.withLock { state in
            state.closed = true
            signal(&state)
        }
    }

    /// The queued items, waiting for some up to `timeout` seconds; `.ended` once closed or when
    /// the client on `socket` has gone (hung up, or the end of its stream). Bytes the client sends
    /// meanwhile are read and ignored: a subscriber has nothing more to say.
    func next(watching socket: Int32, timeout: Double) -> Next {
        let deadline = DispatchTime.now().uptimeNanoseconds + UInt64(max(timeout, 0) * 1e9)
        while true {
            let taken = state.withLock { state -> Next? in
                if state.closed { return .ended }
                if state.signaled {
                    var byte: UInt8 = 0
                    _ = read(wake.read, &byte, 1)
                    state.signaled = false
                }
                guard !state.items.isEmpty else { return nil }
                defer { state.items = [] }
                return .items(state.items)
            }
            if let taken { return taken }
            switch Socket.wait(socket, until: deadline, alsoFor: wake.read) {
            case .timedOut:
                return .idle
            case .other:
                continue
            case .readable:
                var scratch = [UInt8](repeating: 0, count: 512)
                let count = scratch.withUnsafeMutableBytes {
                    recv(socket, $0.baseAddress, $0.count, Int32(MSG_DONTWAIT))
                }
                if count > 0 || (count < 0 && (errno == EINTR || errno == EAGAIN || errno == EWOULDBLOCK)) {
                    continue
                }
                return .ended
            }
        }
    }

    /// Makes the pipe readable, once until the connection reads it back (under the lock, so
    /// that the pipe holds a byte exactly while `signaled` is set).
    private func signal(_ state: inout State) {
        guard !state.signaled else { return }
        var byte: UInt8 = 1
        _ = write(wake.write, &byte, 1)
        state.signaled = true
    }
}
