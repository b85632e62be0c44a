import CLMDB
import Foundation
import Synchronization

/// An open LMDB environment: one store directory holding `data.mdb` and `lock.mdb`.
///
/// Every `Environment` opened on the same directory in one process shares one underlying
/// `MDB_env` (LMDB forbids opening a file twice in one process: closing the second handle would
/// drop the first one's POSIX locks). The environment closes when the last `Environment` for it
/// is released.
///
/// - Reads run on the calling thread inside ``read(_:)``; the read transaction ends when the
///   closure returns (`MDB_NOTLS`: no reader slot is tied to a thread).
/// - Writes run on the environment's one writer thread inside ``write(_:)``. When LMDB reports
///   `MDB_MAP_FULL`, the transaction is aborted, the map doubled, and the closure run again from
///   the start, so the closure must derive everything it writes from the transaction it is given.
/// - A map grown by another process is adopted when LMDB reports `MDB_MAP_RESIZED`.
/// - A read-only use (``EnvironmentOptions/readOnly``) of a store this process may not write is
///   opened with `MDB_RDONLY`. LMDB still writes `lock.mdb` then: a reader takes a slot in it, so
///   that writers in other processes do not reuse the pages it reads. Only on a read-only file
///   system (`EROFS` opening the lock file) does LMDB use no lock file, which is safe because
///   nothing can write the store there. A lock file the process may not write on a writable file
///   system is refused (`EACCES`, naming `lock.mdb`), not opened with `MDB_NOLOCK`: a writer
///   may exist, and a reader it cannot see could read pages being overwritten.
package final class Environment: Sendable {
    private let core: EnvironmentCore

    /// Opens (or creates) the environment in `directory`.
    ///
    /// - Throws: `LMDBError` with `ENOTDIR` when the path is not a directory, `ENOENT` when it is
    ///   missing and `createIfMissing` is false, or LMDB's error (`EACCES`, `MDB_INVALID`, …).
    package init(directory: String, options: EnvironmentOptions = EnvironmentOptions()) throws {
        core = try EnvironmentRegistry.shared.open(directory: directory, options: options)
    }

    deinit {
        EnvironmentRegistry.shared.release(core)
    }

    // MARK: - Transactions

    /// Runs `body` in a read transaction on the calling thread.
    ///
    /// The transaction sees the last commit at its start. Never call ``write(_:)`` from `body`.
    package func read<R>(_ body: (ReadTransaction) throws -> R) throws -> R {
        try core.read(body)
    }

    /// Runs `body` in a write transaction on the writer thread and commits it; blocks the caller.
    ///
    /// If `body` throws, the transaction is aborted and nothing is written. When the map is full,
    /// the transaction is aborted, the map grown and `body` run again, so `body` may run more
    /// than once and must not have effects outside the transaction.
    package func write<R>(_ body: (WriteTransaction) throws -> R) throws -> R {
        try core.write(body, meanwhile: {})
    }

    /// Like ``write(_:)``, and runs `meanwhile` on the calling thread while the transaction runs,
    /// so that the caller can produce what `body` consumes (for example records it encodes while
    /// the writer stores the previous ones). `body` must not wait for anything `meanwhile` might
    /// never produce, and `meanwhile` must not wait for the transaction.
    package func write<R>(_ body: (WriteTransaction) throws -> R, meanwhile: () -> Void) throws -> R {
        try core.write(body, meanwhile: meanwhile)
    }

    /// Like ``write(_:)``, but `body` may share its transaction with the other grouped writes
    /// that callers on other threads queue meanwhile: group commit. One commit, and so one flush
    /// of a durable store, then makes every write of the group durable, and each caller returns
    /// once it is.
    ///
    /// Each write stays atomic and separate. When `body` throws, the shared transaction is
    /// aborted, the writes before it in the group run again together, and it runs again alone,
    /// so it fails alone, with the error it would have had alone: `body` may run more than once
    /// for that reason too, and sees the writes of the group before it. A lone write runs exactly
    /// as ``write(_:)`` runs it.
    package func writeGrouped<R>(_ body: (WriteTransaction) throws -> R) throws -> R {
        try core.writeGrouped(body)
    }

    // MARK: - Copies

    /// Writes a compacted copy of the environment to `descriptor` (`mdb_env_copyfd2` with
    /// `MDB_CP_COMPACT`: free pages are left out and the pages renumbered).
    ///
    /// The copy is taken in a read transaction of its own, so it is the state of one commit and
    /// writers, in this process or others, go on meanwhile. It does not flush `descriptor`.
    package func copyCompacted(to descriptor: Int32) throws {
        try core.read { _ in
            // The gate is held shared, as by any transaction: no resize happens under the copy.
            let code = try core.withEnvironment { mdb_env_copyfd2($0, descriptor, UInt32(MDB_CP_COMPACT)) }
            guard code == 0 else { throw LMDBError(code: code, message: "copying \(core.directory)") }
        }
    }

    // MARK: - Databases

    /// Returns the named database, creating it when `create` is true; nil when it does not exist.
    package func database(named name: String, create: Bool) throws -> Database? {
        try core.database(named: name, create: create)
    }

    /// Names of the named databases in the environment.
    package func databaseNames() throws -> [String] {
        try core.read { txn in
            var names: [String] = []
            // The main database (LMDB's MAIN_DBI, handle 1; handle 0 is the free list) holds one key per named
            // database, its name.
            try txn.withCursor(Database(handle: 1, name: "")) { cursor in
                var entry = try cursor.first()
                while let current = entry {
                    names.append(String(decoding: current.key, as: UTF8.self))
                    entry = try cursor.next()
                }
            }
            return names
        }
    }

    // MARK: - Facts

    /// The directory of the environment.
    package var directory: String { core.directory }

    /// The options the environment was first opened with in this process.
    package var options: EnvironmentOptions { core.options }

    /// Whether the environment was opened read-only (`MDB_RDONLY`): the process may not write it.
    package var isReadOnly: Bool { core.isReadOnly }

    /// The largest key LMDB accepts, in bytes.
    package var maxKeySize: Int { core.maxKeySize }

    /// The current map size of this process's mapping, in bytes.
    package var mapSize: Int { core.currentMapSize() }

    /// The id of the last transaction committed to the file, by any process; 0 when none ever was
    /// (a new file holds only the meta pages `mdb_env_open` wrote).
    package var lastTransactionID: Int {
        core.info().me_last_txnid
    }

    /// Write transactions this process has committed to the file (an environment is shared by
    /// every handle of the process on the file): under the default durability each is one flush
    /// of the disk, shared by all the writes grouped into it (`writeGrouped`).
    package var committedWriteTransactions: UInt64 {
        core.committedWriteTransactions.load(ordering: .relaxed)
    }

    /// Who is writing the file now, as far as a commit's readers are concerned: another
    /// process's commit written and not yet readable, this process's commit under way, or
    /// neither.
    package var commitActivity: CommitActivity { core.commitActivity() }

    /// The size of `data.mdb` on disk, in bytes.
    package var fileSize: Int {
        let fd = open(core.directory + "/data.mdb", O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { return 0 }
        defer { close(fd) }
        return max(0, Int(lseek(fd, 0, SEEK_END)))
    }

    /// Frees the reader slots of processes that died holding them; returns how many were freed.
    @discardableResult
    package func checkReaders() throws -> Int {
        try core.checkReaders()
    }

    /// The identity of the store file (device and inode): the same for every handle of one store.
    package var fileID: FileID { core.fileID }

    /// The reader slots in use, of every process: each with the process's id and the
    /// transaction it reads (nil for a slot kept by a process between its reads).
    package func readerSlots() -> [(pid: Int32, transaction: UInt64?)] {
        readerList().split(separator: "\n").dropFirst().compactMap { line in
            let fields = line.split(separator: " ")
            guard fields.count == 3, let pid = Int32(fields[0]) else { return nil }
            return (pid, UInt64(fields[2]))
        }
    }

    /// The number of read transactions open now in this process (reader slots in use).
    package func openReadTransactionCount() -> Int {
        let pid = getpid()
        return readerSlots().filter { $0.pid == pid && $0.transaction != nil }.count
    }

    /// `mdb_reader_list`'s table: "    pid     thread     txnid", then one line a slot (a free
    /// slot's txnid is "-").
    private func readerList() -> String {
        final class Lines: @unchecked Sendable { var text = "" }
        let lines = Lines()
        _ = withExtendedLifetime(lines) {
            try? core.withEnvironment { env in
                mdb_reader_list(
                    env,
                    { message, context in
                        guard let message, let context else { return 0 }
                        Unmanaged<Lines>.fromOpaque(context).takeUnretainedValue().text += String(cString: message)
                        return 0
                    }, Unmanaged.passUnretained(lines).toOpaque())
            }
        }
        return lines.text
    }

    /// Flushes every write made to `data.mdb` so far, by any process, to disk (`fdatasync`);
    /// unlike ``sync(force:)`` it works in an environment opened read-only too.
    package func flushFile() throws {
        // With the gate held shared, as every use of the `MDB_env`: its descriptor stays open meanwhile.
        try core.withEnvironment { env in
            var fd: Int32 = -1
            try check(mdb_env_get_fd(env, &fd), "mdb_env_get_fd")
            guard fdatasync(fd) == 0 else {
                let code = errno
                throw LMDBError(
                    code: code, message: "\(String(cString: strerror(code))): fdatasync of \(core.directory)/data.mdb")
            }
        }
    }

    /// Flushes data to disk; useful with a relaxed sync mode.
    package func sync(force: Bool = true) throws {
        try core.withEnvironment { try check(mdb_env_sync($0, force ? 1 : 0), "mdb_env_sync") }
    }
}
