import CLMDB
import Foundation

/// Keeps a rewrite of a store's `data.mdb` away from the processes that have it open.
///
/// LMDB maps `data.mdb`: a process that has it open keeps reading and writing the file it
/// mapped, so a file put in its place (a compacted copy renamed over it) would be invisible to
/// it, and its writes lost. Every environment of this package therefore holds a shared `flock`
/// on the store's `lock.mdb` (a file never replaced) while it is open, taken before LMDB maps
/// the data file; a rewrite takes it exclusively, without waiting, and only then replaces the
/// file. (`flock` locks are apart from the `fcntl` locks LMDB takes on the same file.) Tools that
/// open the store with LMDB alone (`mdb_stat`) take no such lock.
package enum OpenLock {
    /// Opens `lock.mdb` and takes the shared lock, waiting while a rewrite holds it; -1 when the
    /// file cannot be opened (a store being created in a directory not yet made, a reader
    /// without access), in which case there is nothing to lock. With `creating`, a missing file is
    /// created empty (LMDB sizes it).
    static func acquireShared(directory: String, creating: Bool) -> Int32 {
        let path = directory + "/lock.mdb"
        var fd = Glibc.open(path, O_RDONLY | O_CLOEXEC)
        if fd < 0, errno == ENOENT, creating {
            fd = Glibc.open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0o600)
        }
        guard fd >= 0 else { return -1 }
        while flock(fd, LOCK_SH) != 0, errno == EINTR {}
        return fd
    }

    /// Whether no process has the store in `directory` open: its `lock.mdb` missing, or its
    /// lock free to take exclusively (taken and let go at once).
    package static func isUnused(directory: String) -> Bool {
        let fd = Glibc.open(directory + "/lock.mdb", O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { return errno == ENOENT }
        defer { close(fd) }
        return flock(fd, LOCK_EX | LOCK_NB) == 0
    }

    /// What a rewrite did.
    package enum Rewrite: Sendable, Hashable {
        /// `data.mdb` was replaced by its compacted copy; the sizes of the file before and after.
        case rewritten(before: Int, after: Int)
        /// A process (this one included) has the store open: nothing was done.
        case busy
    }

    /// The size of the file at `path`.
    private static func size(of path: String) throws -> Int {
        let fd = Glibc.open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { throw LMDBError(code: errno, message: "cannot read \(path)") }
        defer { Glibc.close(fd) }
        return Int(lseek(fd, 0, SEEK_END))
    }

    /// Replaces `data.mdb` in `directory` by a compacted copy of it (`mdb_env_copyfd2` with
    /// `MDB_CP_COMPACT`), when no process has the store open.
    ///
    /// The copy is written beside it (`data.mdb.compacting`), flushed, and renamed over it; the
    /// directory is flushed too. A crash leaves either file whole: the old one until the rename,
    /// the new one after it (a copy left behind is removed by the next rewrite).
    ///
    /// - Throws: `LMDBError` when the copy fails (a full disk: the old file is untouched).
    package static func rewriteCompacted(directory: String) throws -> Rewrite {
        let lock = Glibc.open(directory + "/lock.mdb", O_RDONLY | O_CLOEXEC)
        guard lock >= 0 else { throw LMDBError(code: errno, message: "cannot open \(directory)/lock.mdb") }
        defer { Glibc.close(lock) }
        guard flock(lock, LOCK_EX | LOCK_NB) == 0 else {
            if errno == EWOULDBLOCK { return .busy }
            throw LMDBError(code: errno, message: "cannot lock \(directory)/lock.mdb")
        }
        let path = directory + "/data.mdb"
        let temporary = path + ".compacting"
        unlink(temporary)
        let before = try size(of: path)
        var env: OpaquePointer?
        try check(mdb_env_create(&env), "mdb_env_create")
        guard let env else { throw LMDBError(code: ENOMEM) }
        defer { mdb_env_close(env) }
        try check(mdb_env_set_maxdbs(env, 256), "mdb_env_set_maxdbs")
        try check(mdb_env_set_mapsize(env, max(before, 1 << 16)), "mdb_env_set_mapsize")
        try check(mdb_env_open(env, directory, UInt32(MDB_NOTLS | MDB_RDONLY), 0o600), directory)
        let fd = Glibc.open(temporary, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0o600)
        guard fd >= 0 else { throw LMDBError(code: errno, message: "cannot create \(temporary)") }
        do {
            let code = mdb_env_copyfd2(env, fd, UInt32(MDB_CP_COMPACT))
            guard code == 0 else { throw LMDBError(code: code, message: "copying \(path)") }
            guard fsync(fd) == 0 else { throw LMDBError(code: errno, message: "flushing \(temporary)") }
        } catch {
            Glibc.close(fd)
            unlink(temporary)
            throw error
        }
        let after = Int(lseek(fd, 0, SEEK_END))
        Glibc.close(fd)
        guard rename(temporary, path) == 0 else {
            let code = errno
            unlink(temporary)
            throw LMDBError(code: code, message: "cannot replace \(path)")
        }
        let directoryFD = Glibc.open(directory, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        if directoryFD >= 0 {
            _ = fsync(directoryFD)
            Glibc.close(directoryFD)
        }
        return .rewritten(before: before, after: after)
    }
}
