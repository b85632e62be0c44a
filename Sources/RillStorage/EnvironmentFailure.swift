import CLMDB
import Foundation

/// A commit whose meta-page write failed, which left LMDB's environment unusable (`MDB_PANIC`).
///
/// LMDB writes a commit's data pages, flushes them, then writes the meta page that makes the
/// commit the newest. When that last write fails, LMDB writes the previous meta page's contents
/// back over it and marks the environment as failed: every later transaction of the process,
/// read or write, fails with `MDB_PANIC` until the environment is closed and opened again. The
/// environment does that by itself (see `EnvironmentCore`); this error says what failed, whether
/// the environment was reopened, and, when it could not be, why.
///
/// The commit is not acknowledged, but it is not certainly absent either: the failed write may
/// still have reached the disk (an error reported after the device took the data), so the commit
/// may be found after the environment is reopened or the machine restarts.
package struct EnvironmentFailure: Error, Sendable, CustomStringConvertible {
    /// The store directory.
    package var directory: String
    /// The `errno` of the failed write (`EIO`, `ENOSPC`, …).
    package var code: Int32
    /// The LMDB transaction whose meta page failed to be written.
    package var transactionID: Int
    /// Whether the environment was closed and opened again, so that it serves transactions.
    package var recovered: Bool
    /// Why reopening failed, when it did.
    package var reopenError: String?

    /// The failed write in words: which write, of which transaction, with which error.
    package var cause: String {
        let names = [EIO: "EIO", ENOSPC: "ENOSPC", EDQUOT: "EDQUOT", EROFS: "EROFS", EBADF: "EBADF", EINTR: "EINTR"]
        let name = names[code] ?? "errno \(code)"
        return "writing the meta page of LMDB transaction \(transactionID) failed with \(name) "
            + "(\(String(cString: strerror(code))))"
    }

    package var description: String {
        if recovered { return "\(cause) in \(directory); the environment was reopened" }
        return "\(cause) in \(directory), and reopening the environment failed: \(reopenError ?? "unknown reason")"
    }
}
