import CLMDB
import Foundation
import RillLocks
import Synchronization

/// The one `MDB_env` of a store directory in this process.
///
/// `@unchecked Sendable`: LMDB's `MDB_env` is safe to share between threads once opened; with
/// `MDB_NOTLS` read transactions may run on any thread; write transactions only ever run on
/// `writer`; `mdb_env_set_mapsize` only runs while `gate` is held exclusively, and so does
/// replacing the `MDB_env` after a failed meta-page write (`recover`), while every other use of
/// it holds the gate shared.
final class EnvironmentCore: @unchecked Sendable {
    /// LMDB's environment. Replaced only by `recover`, with `gate` held exclusively; every other
    /// use holds the gate shared (a transaction for its whole life). nil when reopening it failed.
    private var handle: OpaquePointer?
    /// Why `handle` is nil: what every later use throws. Guarded by `gate`, like `handle`.
    private var failure: EnvironmentFailure?
    let directory: String
    let options: EnvironmentOptions
    let fileID: FileID
    let maxKeySize: Int
    /// Opened with `MDB_RDONLY`, because the process may not write the store.
    let isReadOnly: Bool
    let writer: WriterThread
    /// Keeps `mdb_env_set_mapsize` away from live transactions. LMDB allows changing the map
    /// size only while the process has no transaction open, and does not check it. Every
    /// transaction holds the gate shared for its whole life; growing the map (after
    /// `MDB_MAP_FULL`) or adopting a size grown by another process (after `MDB_MAP_RESIZED`)
    /// holds it exclusively.
    let gate = ReadWriteLock()
    let databases = Lock<[String: Database]>([:])
    /// Grouped writes waiting for the writer thread (see `writeGrouped`).
    let groupCommits = GroupCommitQueue()
    /// The file's last page in use when stale reader slots were last cleared (see
    /// `clearStaleReadersIfGrown`); only the writer thread touches it.
    private let lastPageAtReaderCheck = Atomic<Int>(0)
    /// The id of the last write transaction the writer thread began to commit (0 before the
    /// first; put back when a commit fails): see `commitActivity`.
    private let lastCommitBegun = Atomic<Int>(0)
    /// Write transactions committed by this process: each one flush of the file under the
    /// default durability, however many grouped writes it carried.
    let committedWriteTransactions = Atomic<UInt64>(0)
    /// Whether the writer thread is inside `mdb_txn_commit`, writing the file.
    private let isCommitting = Atomic<Bool>(false)
    /// Read transactions of `handle` ended with `mdb_txn_reset`, for the next reads to renew.
    ///
    /// `mdb_txn_begin` allocates a transaction and zeroes its table of database slots (some
    /// 14 KiB for 256 databases), then takes the reader table's lock to find a free slot: most of
    /// the cost of a short read. A reset transaction keeps both, and `mdb_txn_renew` gives it the
    /// newest snapshot without the lock. A reset transaction pins no pages (its slot reads no
    /// snapshot), and with `MDB_NOTLS` it belongs to no thread. At most `idleReaderLimit` are kept;
    /// they are freed before `handle` is closed or replaced.
    private let idleReaders = Lock<[OpaquePointer]>([])
    private static let idleReaderLimit = 8
    /// `lock.mdb`, held with a shared `flock` while the environment is open (-1 when it could
    /// not be opened): a rewrite of the file (`OpenLock`) takes it exclusively, so that it never
    /// replaces `data.mdb` under a process that has it mapped.
    private let openLock: Int32

    init(directory: String, fileID: FileID, options: EnvironmentOptions) throws {
        // Taken before LMDB maps the file: a rewrite under way ends before this process maps it.
        let lock = OpenLock.acquireShared(
            directory: directory, creating: options.createIfMissing && !options.readOnly)
        openLock = lock
        do {
            (handle, isReadOnly) = try Self.openChoosingMode(directory: directory, options: options)
        } catch {
            if lock >= 0 { Glibc.close(lock) }
            throw error
        }
        self.directory = directory
        self.options = options
        self.fileID = fileID
        self.maxKeySize = Int(mdb_env_get_maxkeysize(handle))
        self.writer = WriterThread(name: "rill.writer")
        // Reader slots left behind by killed processes would pin old pages forever.
        _ = try? checkReaders()
        lastPageAtReaderCheck.store(lastPageInUse(), ordering: .relaxed)
    }

    /// Opens the `MDB_env`, read-only when the process may not write it and `options` allow.
    private static func openChoosingMode(directory: String, options: EnvironmentOptions) throws -> (OpaquePointer, Bool)
    {
        let env: OpaquePointer
        let isReadOnly: Bool
        do {
            (env, isReadOnly) = (
                try Self.openEnvironment(directory: directory, options: options, readOnly: false), false
            )
        } catch let error as LMDBError where options.readOnly && [EACCES, EPERM, EROFS].contains(error.code) {
            do {
                (env, isReadOnly) = (
                    try Self.openEnvironment(directory: directory, options: options, readOnly: true), true
                )
            } catch let second as LMDBError
                where [EACCES, EPERM].contains(second.code) && !Self.canWriteLock(directory)
            {
                throw LMDBError(
                    code: second.code,
                    message: "\(String(cString: strerror(second.code))): cannot read \(directory) without write "
                        + "permission on \(directory)/lock.mdb (or on the directory, to create it), where readers register so that writers do not "
                        + "reuse the pages they read")
            }
        }
        return (env, isReadOnly)
    }

    /// Whether the process may open `lock.mdb` for writing, or create it.
    private static func canWriteLock(_ directory: String) -> Bool {
        let fd = Glibc.open(directory + "/lock.mdb", O_RDWR | O_CLOEXEC)
        if fd >= 0 {
            Glibc.close(fd)
            return true
        }
        return errno == ENOENT && access(directory, W_OK) == 0
    }

    /// Creates and opens an `MDB_env`; closes it again when opening fails.
    private static func openEnvironment(
        directory: String, options: EnvironmentOptions, readOnly: Bool
    ) throws -> OpaquePointer {
        var env: OpaquePointer?
        try check(mdb_env_create(&env), "mdb_env_create")
        guard let env else { throw LMDBError(code: ENOMEM) }
        do {
            try check(mdb_env_set_maxdbs(env, MDB_dbi(options.maxDatabases)), "mdb_env_set_maxdbs")
            try check(mdb_env_set_maxreaders(env, options.maxReaders), "mdb_env_set_maxreaders")
            try check(mdb_env_set_mapsize(env, max(options.initialMapSize, 1 << 16)), "mdb_env_set_mapsize")
            var flags = UInt32(MDB_NOTLS)
            switch options.syncMode {
            case .full: break
            case .noMetaSync: flags |= UInt32(MDB_NOMETASYNC)
            case .noSync: flags |= UInt32(MDB_NOSYNC)
            }
            if readOnly { flags |= UInt32(MDB_RDONLY) }
            try DataFileHeader.checkSize(directory: directory, creating: options.createIfMissing && !readOnly)
            if !readOnly { try allocateLockFile(directory: directory, readers: options.maxReaders) }
            try check(mdb_env_open(env, directory, flags, 0o600), directory)
        } catch {
            mdb_env_close(env)
            throw error
        }
        return env
    }

    /// Creates `lock.mdb` with its blocks allocated, when it is missing or empty.
    ///
    /// LMDB sizes the lock file with `ftruncate` and then writes into its mapping: on a full file
    /// system the file is sparse and the first write kills the process with `SIGBUS`.
    /// `posix_fallocate` reserves the blocks first, so a full disk is an error. The size is
    /// LMDB's (`mdb_env_setup_locks`: a 192-byte header holding the first reader slot, then
    /// 64 bytes a slot); a lock file that already has a size belongs to LMDB and is left alone,
    /// since other processes may use it. Failing to create it (a read-only directory) is left
    /// for LMDB to report.
    static func allocateLockFile(directory: String, readers: UInt32) throws {
        let path = directory + "/lock.mdb"
        var fd = open(path, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0o600)
        let created = fd >= 0
        if !created {
            var info = stat()
            guard errno == EEXIST, stat(path, &info) == 0, info.st_size == 0 else { return }
            fd = open(path, O_RDWR | O_CLOEXEC)
            guard fd >= 0 else { return }
        }
        defer { Glibc.close(fd) }
        let size = off_t(max(readers, 1) - 1) * 64 + 192
        let rc = posix_fallocate(fd, 0, size)
        guard rc == 0 || rc == EOPNOTSUPP || rc == EINVAL else {
            // LMDB has not seen a file this call created: nothing else can be using it.
            if created { unlink(path) }
            throw LMDBError(code: rc, message: "\(String(cString: strerror(rc))): cannot allocate \(path)")
        }
    }

    func close() {
        writer.stop()
        freeIdleReaders()
        if let handle { mdb_env_close(handle) }
        if openLock >= 0 { Glibc.close(openLock) }
    }

    /// Runs `body` with the `MDB_env`, outside any transaction, holding the gate shared so that
    /// a recovery does not replace it meanwhile.
    ///
    /// - Throws: the `EnvironmentFailure` that left the environment closed, when reopening failed.
    func withEnvironment<R>(_ body: (OpaquePointer) throws -> R) throws -> R {
        gate.lockShared()
        defer { gate.unlockShared() }
        guard let handle else { throw failure! }
        return try body(handle)
    }

    /// LMDB's facts of the file and the map; zero when the environment could not be reopened.
    func info() -> MDB_envinfo {
        var info = MDB_envinfo()
        _ = try? withEnvironment { mdb_env_info($0, &info) }
        return info
    }

    /// Commits `txn`, a write transaction of the writer thread, its id noted before LMDB writes
    /// it (see `commitActivity`).
    func commitWrite(_ txn: OpaquePointer) -> Int32 {
        let previous = lastCommitBegun.exchange(Int(mdb_txn_id(txn)), ordering: .acquiringAndReleasing)
        isCommitting.store(true, ordering: .releasing)
        let rc = mdb_txn_commit(txn)
        isCommitting.store(false, ordering: .releasing)
        if rc != 0 {
            lastCommitBegun.store(previous, ordering: .releasing)
        } else {
            committedWriteTransactions.wrappingAdd(1, ordering: .relaxed)
        }
        return rc
    }

    /// Who is writing the file now, as far as a commit's readers are concerned (see
    /// `CommitActivity`).
    ///
    /// LMDB publishes a commit in `lock.mdb` once its meta-page write returns, before it lets
    /// go of its write lock. So a newest meta page no newer than the last commit this process
    /// began is either that commit (which the store posts once it returns) or one published
    /// before it began; only a newer one, unpublished when the read began, can be another
    /// process's commit under way. (After a commit of this process fails, another process's
    /// commit may take its id before the id is put back: that commit is then noticed at the
    /// next wake-up rather than at once.) `.anotherProcessPublishing` when the file cannot be
    /// read.
    func commitActivity() -> CommitActivity {
        // In this order: the published id, the newest meta page, then this process's last
        // commit, so that a commit of its own seen in the meta page is always counted.
        guard let published = try? read({ Int($0.transactionID) }) else { return .anotherProcessPublishing }
        let written = info().me_last_txnid
        if written > published, written > lastCommitBegun.load(ordering: .acquiring) {
            return .anotherProcessPublishing
        }
        return isCommitting.load(ordering: .acquiring) ? .thisProcessCommitting : .none
    }

    func checkReaders() throws -> Int {
        var dead: Int32 = 0
        try withEnvironment { try check(mdb_reader_check($0, &dead), "mdb_reader_check") }
        return Int(dead)
    }

    /// The last page number in use, according to the newest meta page.
    private func lastPageInUse() -> Int {
        info().me_last_pgno
    }

    /// Clears the reader slots of dead processes after a commit that made the file longer than
    /// it was at the last check. Runs on the writer thread, after the commit.
    ///
    /// A slot left by a killed process pins the snapshot it was reading: no page freed since can
    /// be reused, so every commit takes new pages at the end of the file. LMDB clears such slots
    /// only when asked (`mdb_reader_check`), and a process that opened the store before the
    /// reader died would never ask. Checking whenever the file has grown bounds the growth a
    /// dead reader causes to one commit's new pages: the first commit that extends the file
    /// clears the slot, and the next one reuses the pages it had pinned. Without a stale reader a
    /// file grows only with its data, and the check (one `fcntl` lock test per other process in
    /// the reader table) costs microseconds.
    func clearStaleReadersIfGrown() {
        let last = lastPageInUse()
        guard last > lastPageAtReaderCheck.load(ordering: .relaxed) else { return }
        lastPageAtReaderCheck.store(last, ordering: .relaxed)
        _ = try? checkReaders()
    }

    func currentMapSize() -> Int {
        info().me_mapsize
    }

    // MARK: Transactions

    func read<R>(_ body: (ReadTransaction) throws -> R) throws -> R {
        let txn = try begin(readOnly: true)
        defer {
            // Kept for the next read while the gate is still held: it belongs to this `handle`.
            mdb_txn_reset(txn)
            let kept = idleReaders.withLock { idle in
                guard idle.count < Self.idleReaderLimit else { return false }
                idle.append(txn)
                return true
            }
            if !kept { mdb_txn_abort(txn) }
            gate.unlockShared()
        }
        return try body(ReadTransaction(pointer: txn, maxKeySize: maxKeySize))
    }

    /// A reset read transaction renewed to the newest snapshot, when one is kept and renews;
    /// nil otherwise (one that fails to renew is freed: a new one reports why). With the gate
    /// held shared.
    private func renewedReader() -> OpaquePointer? {
        guard let txn = idleReaders.withLock({ $0.popLast() }) else { return nil }
        if mdb_txn_renew(txn) == 0 { return txn }
        mdb_txn_abort(txn)
        return nil
    }

    /// Frees the kept read transactions; before `handle` is closed, with no read running.
    private func freeIdleReaders() {
        let idle = idleReaders.withLock { idle in
            let taken = idle
            idle.removeAll()
            return taken
        }
        for txn in idle { mdb_txn_abort(txn) }
    }

    /// Begins a transaction with the resize gate held shared (the caller releases it when the
    /// transaction ends), first adopting a map that another process grew.
    ///
    /// A transaction begun between a failed meta-page write and the recovery that follows it on
    /// the writer thread gets `MDB_PANIC`: it waits for the recovery and begins again. The wait is
    /// bounded, so that a thread whose own outer transaction keeps the recovery waiting gets an
    /// error rather than a deadlock.
    func begin(readOnly: Bool) throws -> OpaquePointer {
        var panicked: UInt64?
        while true {
            gate.lockShared()
            guard let env = handle else {
                gate.unlockShared()
                throw failure!
            }
            if readOnly, let renewed = renewedReader() { return renewed }
            var txn: OpaquePointer?
            let rc = mdb_txn_begin(env, nil, readOnly ? UInt32(MDB_RDONLY) : 0, &txn)
            if rc == MDB_MAP_RESIZED {
                gate.unlockShared()
                try adoptGrownMap()
                continue
            }
            if rc == MDB_PANIC {
                gate.unlockShared()
                let now = monotonicNanoseconds()
                if now - (panicked ?? now) > 10_000_000_000 {
                    throw LMDBError(
                        code: MDB_PANIC, message: "\(directory) failed a write and has not been reopened since")
                }
                panicked = panicked ?? now
                usleep(1_000)
                continue
            }
            guard rc == 0, let txn else {
                gate.unlockShared()
                try check(rc, readOnly ? "mdb_txn_begin(read)" : "mdb_txn_begin(write)")
                preconditionFailure("mdb_txn_begin failed without an error code")
            }
            return txn
        }
    }

    /// Thrown by writes to an environment opened read-only.
    var readOnlyError: LMDBError {
        LMDBError(code: EROFS, message: "\(directory) is open read-only in this process, which may not write it")
    }

    func write<R>(_ body: (WriteTransaction) throws -> R, meanwhile: () -> Void) throws -> R {
        guard !isReadOnly else { throw readOnlyError }
        return try writer.runAndWait({ try runTransaction(body) }, meanwhile: meanwhile)
    }

    /// Runs `body` in a write transaction of its own and commits it: on the writer thread, with
    /// the map grown and `body` run again as often as it fills the map.
    func runTransaction<R>(_ body: (WriteTransaction) throws -> R) throws -> R {
        var growths = 0
        while true {
            let txn = try begin(readOnly: false)
            let transaction = WriteTransaction(pointer: txn, maxKeySize: maxKeySize) { name in
                self.databases.withLock { $0[name] }
            }
            let result: R
            do {
                result = try body(transaction)
            } catch {
                mdb_txn_abort(txn)
                gate.unlockShared()
                if transaction.state.hitMapFull, growths < 48 {
                    growths += 1
                    try growMap()
                    continue
                }
                throw error
            }
            let transactionID = Int(mdb_txn_id(txn))
            let rc = commitWrite(txn)
            gate.unlockShared()
            if rc == MDB_MAP_FULL, growths < 48 {
                growths += 1
                try growMap()
                continue
            }
            try checkCommit(rc, transaction: transactionID)
            adopt(transaction.state.openedDatabases)
            clearStaleReadersIfGrown()
            return result
        }
    }

    /// Takes the database handles a committed transaction opened into the environment's table.
    func adopt(_ opened: [String: Database]) {
        if !opened.isEmpty { databases.withLock { $0.merge(opened) { known, _ in known } } }
    }

    /// Doubles the map. Runs on the writer thread between transactions.
    private func growMap() throws {
        try gate.withExclusive {
            guard let handle else { throw failure! }
            var info = MDB_envinfo()
            mdb_env_info(handle, &info)
            let current = info.me_mapsize
            let target = current < (1 << 30) ? current * 2 : current + (1 << 30)
            try check(mdb_env_set_mapsize(handle, target), "growing the map to \(target) bytes")
        }
    }

    /// Takes the map size another process recorded in the file.
    private func adoptGrownMap() throws {
        try gate.withExclusive {
            guard let handle else { throw failure! }
            try check(mdb_env_set_mapsize(handle, 0), "adopting the map size grown by another process")
        }
    }

    // MARK: Failed writes

    /// Throws for a commit that failed with `rc`; when the failure left the environment
    /// unusable (a failed meta-page write: LMDB then answers every transaction with
    /// `MDB_PANIC`), reopens it first and throws an `EnvironmentFailure` naming the cause.
    /// Runs on the writer thread, with the gate released.
    func checkCommit(_ rc: Int32, transaction: Int) throws {
        guard rc != 0 else { return }
        guard rc != MDB_PANIC, !isPanicked() else { throw recover(from: rc, transaction: transaction) }
        try check(rc, "mdb_txn_commit")
    }

    /// Whether LMDB marked the environment as failed. It does not say so but through a
    /// transaction: a read transaction that cannot begin with `MDB_PANIC`.
    private func isPanicked() -> Bool {
        (try? withEnvironment { env in
            var txn: OpaquePointer?
            let rc = mdb_txn_begin(env, nil, UInt32(MDB_RDONLY), &txn)
            if rc == 0 { mdb_txn_abort(txn) }
            return rc == MDB_PANIC
        }) ?? false
    }

    /// Closes the failed `MDB_env` and opens the store again, with the same options, map size and
    /// database handles; returns the failure to report, saying whether it worked.
    ///
    /// Safe because the gate is held exclusively: no transaction of this process is live (each
    /// holds the gate shared), so nothing points into the old map, and no other thread reaches
    /// `handle` meanwhile. The old environment is closed before the new one opens: two `MDB_env`
    /// of one file in one process would share POSIX locks, and closing one drops the other's.
    /// The named databases are opened again in the order of their handles, so that each gets
    /// the handle it had (every `Database` value held above this layer stays valid); when one
    /// does not, the environment stays closed and every use throws the failure.
    private func recover(from code: Int32, transaction: Int) -> EnvironmentFailure {
        var failure = EnvironmentFailure(
            directory: directory, code: code == MDB_PANIC ? EIO : code, transactionID: transaction, recovered: false)
        gate.withExclusive {
            let known = databases.withLock { $0.values.sorted { $0.handle < $1.handle } }
            var reopened = options
            reopened.createIfMissing = false
            freeIdleReaders()
            if let old = handle {
                var info = MDB_envinfo()
                mdb_env_info(old, &info)
                reopened.initialMapSize = info.me_mapsize
                mdb_env_close(old)
                handle = nil
            }
            do {
                let env = try Self.openEnvironment(directory: directory, options: reopened, readOnly: false)
                do {
                    try Self.reopen(known, in: env)
                } catch {
                    mdb_env_close(env)
                    throw error
                }
                handle = env
                failure.recovered = true
            } catch {
                failure.reopenError = "\(error)"
                self.failure = failure
            }
        }
        return failure
    }

    /// Opens `databases` in `env`, in the order of their handles, and checks that each gets its handle.
    private static func reopen(_ databases: [Database], in env: OpaquePointer) throws {
        var txn: OpaquePointer?
        try check(mdb_txn_begin(env, nil, UInt32(MDB_RDONLY), &txn), "mdb_txn_begin(read)")
        for database in databases {
            var handle: MDB_dbi = 0
            let rc = mdb_dbi_open(txn, database.name, 0, &handle)
            guard rc == 0, handle == database.handle else {
                mdb_txn_abort(txn)
                try check(rc, "opening database \(database.name)")
                throw LMDBError(
                    code: MDB_BAD_DBI,
                    message: "database \(database.name) reopened as handle \(handle), not \(database.handle)")
            }
        }
        // Committed, so that the handles stay open for the environment's life.
        try check(mdb_txn_commit(txn), "mdb_txn_commit(read)")
    }

    // MARK: Databases

    func database(named name: String, create: Bool) throws -> Database? {
        if let known = databases.withLock({ $0[name] }) { return known }
        precondition(!name.isEmpty, "a database needs a name")
        // mdb_dbi_open must never run in two transactions of one process at once: serialize on the writer.
        let opened: Database? = try writer.runAndWait {
            if let known = databases.withLock({ $0[name] }) { return known }
            var handle: MDB_dbi = 0
            if create {
                guard !isReadOnly else { throw readOnlyError }
                return try writeOnWriterThread { txn in
                    try check(mdb_dbi_open(txn.pointer, name, UInt32(MDB_CREATE), &handle), "opening database \(name)")
                    return Database(handle: handle, name: name)
                }
            }
            return try readCommitting { txn -> Database? in
                let rc = mdb_dbi_open(txn, name, 0, &handle)
                if rc == MDB_NOTFOUND { return nil }
                try check(rc, "opening database \(name)")
                return Database(handle: handle, name: name)
            }
        }
        if let opened { databases.withLock { $0[name] = opened } }
        return opened
    }

    /// A write transaction on the writer thread, for internal setup steps.
    private func writeOnWriterThread<R>(_ body: (WriteTransaction) throws -> R) throws -> R {
        let txn = try begin(readOnly: false)
        let result: R
        do {
            result = try body(WriteTransaction(pointer: txn, maxKeySize: maxKeySize))
        } catch {
            mdb_txn_abort(txn)
            gate.unlockShared()
            throw error
        }
        // mdb_txn_commit frees the transaction whether or not it succeeds: never abort after it.
        let transactionID = Int(mdb_txn_id(txn))
        let rc = mdb_txn_commit(txn)
        gate.unlockShared()
        try checkCommit(rc, transaction: transactionID)
        return result
    }

    /// A read transaction that is committed, so that database handles it opened stay valid.
    private func readCommitting<R>(_ body: (OpaquePointer) throws -> R) throws -> R {
        let txn = try begin(readOnly: true)
        defer { gate.unlockShared() }
        let result: R
        do {
            result = try body(txn)
        } catch {
            mdb_txn_abort(txn)
            throw error
        }
        try check(mdb_txn_commit(txn), "mdb_txn_commit(read)")
        return result
    }
}
