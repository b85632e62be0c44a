import Foundation
import RillLocks
import RillStorage
import Synchronization

#if canImport(Glibc)
    import Glibc
#endif

/// Wakes a follower of the log when the log may have grown.
///
/// A commit of this process wakes every watch of its store file at once: the store tells its
/// ``Log`` after each commit, and the log posts to the watches of the file, whoever made them
/// (the live queries' follower, `rill log --follow`), without knowing what they do. Another
/// process's commit wakes a watch through inotify on `data.mdb`. A wait is bounded (a second,
/// or 50 ms where inotify is not available), so a missed wake-up only delays.
///
/// inotify reports a commit's last write to the file, its meta page, a moment before the commit
/// can be read: LMDB publishes the new transaction in `lock.mdb` once that write returns, and a
/// reader woken in between sees the commit before it. So after a wake-up by the file that finds
/// another process's commit so (`commitActivity`: the file's newest meta page newer than what a
/// read sees and than this process's last commit), the next two waits are short (a tenth of a
/// millisecond, then a millisecond), and the owner reads again whether or not anything else
/// comes; without them, such a commit waited for the next write to the file (the writer's next
/// commit) or for the second-long fallback. A wake-up that finds none needs no second look: a
/// meta page written after the look wakes the file again, and one written before it is readable.
///
/// In a process that writes, most changes of the file are its own commits, several writes each,
/// which the log posts once they return. A wake-up by the file during one of them (this
/// process's writer inside `mdb_txn_commit`, when no other process can be writing) does not
/// return: the wait goes on for the post, the file's further changes left queued until then (or
/// for 5 ms at most), rather than waking the owner for every write of every commit.
///
/// A watch does not read the log: its owner reads the commits after the last one it saw, in a
/// snapshot of its own, after each wake-up.
package final class LogWatch: Sendable {
    /// The store file watched.
    let file: StoreFileID
    private let wakeRead: Int32
    private let inotify: Int32
    /// The write end of the wake-up pipe, which the log's posts and `wake()` use.
    private let signal: Signal

    /// The longest wait without a wake-up when inotify watches the file.
    static let fallbackPoll: Int32 = 1_000
    /// How many short waits follow a wake-up by the file.
    private static let recheckCount = 2
    /// How many of `rechecks` are left before waits are long again; only the owner's thread waits.
    private let rechecksLeft = Atomic<Int>(0)
    /// Who is writing the file (see `CommitActivity`).
    private let commitActivity: @Sendable () -> CommitActivity
    /// The longest wait, in milliseconds, for the post of this process's commit under way before
    /// the file's changes are read again.
    static let ownCommitPoll: Int32 = 5

    /// - Parameter commitActivity: tells who is writing the file; called on the waiter's thread
    ///   after a wake-up by the file.
    init(file: StoreFileID, directory: String, commitActivity: @escaping @Sendable () -> CommitActivity) throws {
        var fds: [Int32] = [0, 0]
        guard pipe(&fds) == 0 else {
            throw RillError(.storage, "cannot create the live-query wake-up pipe: \(String(cString: strerror(errno)))")
        }
        for fd in fds {
            _ = fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK)
            _ = fcntl(fd, F_SETFD, FD_CLOEXEC)
        }
        self.file = file
        self.commitActivity = commitActivity
        wakeRead = fds[0]
        signal = Signal(fd: fds[1])
        let watch = inotify_init1(Int32(IN_NONBLOCK | IN_CLOEXEC))
        if watch >= 0, inotify_add_watch(watch, directory + "/data.mdb", UInt32(IN_MODIFY)) < 0 {
            _ = Glibc.close(watch)
            inotify = -1
        } else {
            inotify = watch
        }
        Self.register(signal, for: file)
    }

    deinit { close() }

    /// Ends the watch: no post reaches it any more, and its descriptors are closed. Later calls
    /// of `wake()` do nothing.
    package func close() {
        guard Self.unregister(signal, for: file) else { return }
        _ = Glibc.close(wakeRead)
        if inotify >= 0 { _ = Glibc.close(inotify) }
    }

    /// Whether the next waits are short: the last wake-up by the file found another process's
    /// commit written and not yet readable.
    package var isRechecking: Bool { rechecksLeft.load(ordering: .relaxed) > 0 }

    /// Wakes the watch's waiter (for work of its own, not a commit).
    package func wake() { signal.post() }

    /// Returns once a commit may have landed — one of this process's was posted, the file
    /// changed but for this process's commit under way — or after a bounded wait. Every wake-up
    /// pending is consumed, so a burst of commits is one return.
    package func wait() {
        var buffer = [UInt8](repeating: 0, count: 4096)
        func drain(_ fd: Int32) -> Bool {
            var changed = false
            while buffer.withUnsafeMutableBytes({ read(fd, $0.baseAddress, $0.count) }) > 0 { changed = true }
            return changed
        }
        let started = DispatchTime.now().uptimeNanoseconds
        // Set while this process's commit is under way: the file is left unwatched until it is
        // posted (or `ownCommitPoll` passes).
        var awaitingOwnCommit = false
        while true {
            var fds = [pollfd(fd: wakeRead, events: Int16(POLLIN), revents: 0)]
            if inotify >= 0, !awaitingOwnCommit { fds.append(pollfd(fd: inotify, events: Int16(POLLIN), revents: 0)) }
            let rechecks = awaitingOwnCommit ? 0 : rechecksLeft.load(ordering: .relaxed)
            var timeout = inotify >= 0 ? Self.fallbackPoll : 50
            if awaitingOwnCommit {
                timeout = Self.ownCommitPoll
            } else if rechecks == Self.recheckCount {
                // `poll` waits whole milliseconds: the first short wait sleeps, then only looks.
                usleep(100)
                timeout = 0
            } else if rechecks > 0 {
                timeout = 1
            }
            let ready = poll(&fds, nfds_t(fds.count), timeout)
            if ready == 0, rechecks > 0 { rechecksLeft.store(rechecks - 1, ordering: .relaxed) }
            let posted = drain(wakeRead)
            awaitingOwnCommit = false
            if inotify >= 0, drain(inotify) {
                switch commitActivity() {
                case .anotherProcessPublishing:
                    rechecksLeft.store(Self.recheckCount, ordering: .relaxed)
                case .thisProcessCommitting:
                    // Its post ends the wait; nothing else is new for the owner.
                    let waited = DispatchTime.now().uptimeNanoseconds - started
                    if !posted, waited < UInt64(Self.fallbackPoll) * 1_000_000 {
                        awaitingOwnCommit = true
                        continue
                    }
                case .none:
                    break
                }
            }
            // After the pipe is drained: a post that found one pending from before comes back
            // readable from the commits its owner now reads.
            signal.consumed()
            return
        }
    }

    // MARK: - Posting

    /// The write end of a watch's pipe; closed under the table's lock, so a post never writes to
    /// a descriptor that was closed (and perhaps reused).
    ///
    /// Posts coalesce: while one is pending (its byte written, or about to be, and the pipe not
    /// yet drained), another writes nothing. The saves of a group commit each post when they
    /// return, together: each writing a byte under this lock, they met on it, and on the pipe,
    /// for one wake-up that the first byte gives. A post skipped that way is covered: its
    /// commit landed before the pending flag was cleared (`consumed()`), which is before the
    /// owner reads the log.
    private final class Signal: Sendable {
        private let fd: Lock<Int32>
        private let pending = Atomic<Bool>(false)

        init(fd: Int32) { self.fd = Lock(fd) }

        func post() {
            guard !pending.exchange(true, ordering: .sequentiallyConsistent) else { return }
            fd.withLock { fd in
                guard fd >= 0 else { return }
                var byte: UInt8 = 1
                _ = write(fd, &byte, 1)
            }
        }

        /// The waiter drained the pipe: the next post writes again.
        func consumed() {
            pending.store(false, ordering: .sequentiallyConsistent)
        }

        /// Closes the descriptor; false when it was closed already.
        func close() -> Bool {
            fd.withLock { fd in
                guard fd >= 0 else { return false }
                _ = Glibc.close(fd)
                fd = -1
                return true
            }
        }
    }

    /// The watches of this process, by store file.
    private static let watches = Lock<[StoreFileID: [Signal]]>([:])
    /// How many watches exist: a commit checks this before taking the lock.
    private static let count = Atomic<Int>(0)

    private static func register(_ signal: Signal, for file: StoreFileID) {
        watches.withLock { $0[file, default: []].append(signal) }
        count.add(1, ordering: .relaxed)
    }

    private static func unregister(_ signal: Signal, for file: StoreFileID) -> Bool {
        let removed = watches.withLock { table -> Bool in
            guard let index = table[file]?.firstIndex(where: { $0 === signal }) else { return false }
            table[file]!.remove(at: index)
            if table[file]!.isEmpty { table[file] = nil }
            return true
        }
        guard removed else { return false }
        count.subtract(1, ordering: .relaxed)
        return signal.close()
    }

    /// Wakes every watch of `file`: a commit of this process landed there.
    static func post(to file: StoreFileID) {
        guard count.load(ordering: .relaxed) > 0 else { return }
        for signal in watches.withLock({ $0[file] ?? [] }) { signal.post() }
    }
}
