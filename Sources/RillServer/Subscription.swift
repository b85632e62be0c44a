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
        /// A byte is in the pipe, or about to be, since the connection last took the items.
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
        let wakes = state.withLock { state in
            if state.items.count >= limit {
                state.items = [.reset]
            } else {
                state.items.append(.event(event))
            }
            return Self.signal(&state)
        }
        if wakes { wakeConnection() }
    }

    /// Ends the subscription: the connection's next wait returns `.ended`.
    func close() {
        let wakes = state.withLock { state in
            state.closed = true
            return Self.signal(&state)
        }
        if wakes { wakeConnection() }
    }

    /// The queued items, waiting for some up to `timeout` seconds; `.ended` once closed or when
    /// the client on `socket` has gone (hung up, or the end of its stream). Bytes the client sends
    /// meanwhile are read and ignored: a subscriber has nothing more to say.
    func next(watching socket: Int32, timeout: Double) -> Next {
        let deadline = DispatchTime.now().uptimeNanoseconds + UInt64(max(timeout, 0) * 1e9)
        while true {
            let taken = state.withLock { state -> Next? in
                if state.closed { return .ended }
                state.signaled = false
                guard !state.items.isEmpty else { return nil }
                defer { state.items = [] }
                return .items(state.items)
            }
            if let taken { return taken }
            switch Socket.wait(socket, until: deadline, alsoFor: wake.read) {
            case .timedOut:
                return .idle
            case .other:
                drainWakeUps()
                continue
            case .readable:
                let count = withUnsafeTemporaryAllocation(of: UInt8.self, capacity: 512) {
                    recv(socket, $0.baseAddress, $0.count, Int32(MSG_DONTWAIT))
                }
                if count > 0 || (count < 0 && (errno == EINTR || errno == EAGAIN || errno == EWOULDBLOCK)) {
                    continue
                }
                return .ended
            }
        }
    }

    /// Marks the queue signaled; true when it was not, and the caller must then `wakeConnection()` the
    /// connection once it has let go of the lock.
    ///
    /// The pipe is written and read outside the lock: the follower pushing and the connection
    /// taking met on it, each holding it through a system call. So a byte may come after the
    /// items it announces were taken, or stay in the pipe: the connection drains the pipe
    /// whenever a wait finds it readable, and takes what is queued after each wait. No push is
    /// missed: one after the connection's last take finds `signaled` cleared by that take, and
    /// writes.
    private static func signal(_ state: inout State) -> Bool {
        guard !state.signaled else { return false }
        state.signaled = true
        return true
    }

    private func wakeConnection() {
        var byte: UInt8 = 1
        _ = write(wake.write, &byte, 1)
    }

    /// Reads every byte in the pipe (it never blocks: the pipe is non-blocking). A read of a pipe
    /// gives every byte in it up to the count asked for, so one that fills less than its buffer
    /// emptied it: the common wake-up (one byte) costs one read, not a second that finds nothing.
    /// A byte written meanwhile leaves the pipe readable, and the next wait sees it.
    private func drainWakeUps() {
        withUnsafeTemporaryAllocation(of: UInt8.self, capacity: 64) { bytes in
            while read(wake.read, bytes.baseAddress, bytes.count) == bytes.count {}
        }
    }
}
