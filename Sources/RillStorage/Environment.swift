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

    /// The size of `data.mdb` on disk, in bytes.
    package var fileSize: Int {
        var info = stat()
        guard stat(core.directory + "/data.mdb", &info) == 0 else { return 0 }
        return Int(info.st_size)
    }

    /// Frees the reader slots of processes that died holding them; returns how many were freed.
    @discardableResult
    package func checkReaders() throws -> Int {
        try core.checkReaders()
    }

    /// The identity of the store file (device and inode): the same for every handle of one store.
    package var fileID: FileID { core.fileID }

    /// The number of read transactions open now in this process (reader slots in use).
    package func openReadTransactionCount() -> Int {
        final class Lines: @unchecked Sendable { var text = "" }
        let lines = Lines()
        _ = withExtendedLifetime(lines) {
            mdb_reader_list(
                core.env,
                { message, context in
                    guard let message, let context else { return 0 }
                    Unmanaged<Lines>.fromOpaque(context).takeUnretainedValue().text += String(cString: message)
                    return 0
                }, Unmanaged.passUnretained(lines).toOpaque())
        }
        // "    pid     thread     txnid" then one line a slot; a free slot's txnid is "-".
        let pid = String(getpid())
        return lines.text.split(separator: "\n").dropFirst().filter { line in
            let fields = line.split(separator: " ")
            return fields.count == 3 && fields[0] == pid && fields[2] != "-"
        }.count
    }

    /// Flushes data to disk; useful with a relaxed sync mode.
    package func sync(force: Bool = true) throws {
        try check(mdb_env_sync(core.env, force ? 1 : 0), "mdb_env_sync")
    }
}

// MARK: - Shared core

/// The one `MDB_env` of a store directory in this process.
///
/// `@unchecked Sendable`: LMDB's `MDB_env` is safe to share between threads once opened; with
/// `MDB_NOTLS` read transactions may run on any thread; write transactions only ever run on
/// `writer`; `mdb_env_set_mapsize` only runs while `gate` is held exclusively.
final class EnvironmentCore: @unchecked Sendable {
    let env: OpaquePointer
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
    private let gate = ReadWriteLock()
    private let databases = Mutex<[String: Database]>([:])
    /// The file's last page in use when stale reader slots were last cleared (see
    /// `clearStaleReadersIfGrown`); only the writer thread touches it.
    private let lastPageAtReaderCheck = Atomic<Int>(0)

    init(directory: String, fileID: FileID, options: EnvironmentOptions) throws {
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
        self.directory = directory
        self.options = options
        self.fileID = fileID
        self.maxKeySize = Int(mdb_env_get_maxkeysize(env))
        self.writer = WriterThread(name: "rill.writer")
        // Reader slots left behind by killed processes would pin old pages forever.
        _ = try? checkReaders()
        lastPageAtReaderCheck.store(lastPageInUse(), ordering: .relaxed)
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
    private static func allocateLockFile(directory: String, readers: UInt32) throws {
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
        mdb_env_close(env)
    }

    func checkReaders() throws -> Int {
        var dead: Int32 = 0
        try check(mdb_reader_check(env, &dead), "mdb_reader_check")
        return Int(dead)
    }

    /// The last page number in use, according to the newest meta page.
    private func lastPageInUse() -> Int {
        var info = MDB_envinfo()
        mdb_env_info(env, &info)
        return info.me_last_pgno
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
    private func clearStaleReadersIfGrown() {
        let last = lastPageInUse()
        guard last > lastPageAtReaderCheck.load(ordering: .relaxed) else { return }
        lastPageAtReaderCheck.store(last, ordering: .relaxed)
        _ = try? checkReaders()
    }

    func currentMapSize() -> Int {
        var info = MDB_envinfo()
        mdb_env_info(env, &info)
        return info.me_mapsize
    }

    // MARK: Transactions

    func read<R>(_ body: (ReadTransaction) throws -> R) throws -> R {
        let txn = try begin(readOnly: true)
        defer {
            mdb_txn_abort(txn)
            gate.unlockShared()
        }
        return try body(ReadTransaction(pointer: txn, maxKeySize: maxKeySize))
    }

    /// Begins a transaction with the resize gate held shared (the caller releases it when the
    /// transaction ends), first adopting a map that another process grew.
    private func begin(readOnly: Bool) throws -> OpaquePointer {
        while true {
            gate.lockShared()
            var txn: OpaquePointer?
            let rc = mdb_txn_begin(env, nil, readOnly ? UInt32(MDB_RDONLY) : 0, &txn)
            if rc == MDB_MAP_RESIZED {
                gate.unlockShared()
                try adoptGrownMap()
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
    private var readOnlyError: LMDBError {
        LMDBError(code: EROFS, message: "\(directory) is open read-only in this process, which may not write it")
    }

    func write<R>(_ body: (WriteTransaction) throws -> R, meanwhile: () -> Void) throws -> R {
        guard !isReadOnly else { throw readOnlyError }
        return try writer.runAndWait(
            {
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
                    let rc = mdb_txn_commit(txn)
                    gate.unlockShared()
                    if rc == MDB_MAP_FULL, growths < 48 {
                        growths += 1
                        try growMap()
                        continue
                    }
                    try check(rc, "mdb_txn_commit")
                    let opened = transaction.state.openedDatabases
                    if !opened.isEmpty { databases.withLock { $0.merge(opened) { known, _ in known } } }
                    clearStaleReadersIfGrown()
                    return result
                }
            }, meanwhile: meanwhile)
    }

    /// Doubles the map. Runs on the writer thread between transactions.
    private func growMap() throws {
        try gate.withExclusive {
            let current = currentMapSize()
            let target = current < (1 << 30) ? current * 2 : current + (1 << 30)
            try check(mdb_env_set_mapsize(env, target), "growing the map to \(target) bytes")
        }
    }

    /// Takes the map size another process recorded in the file.
    private func adoptGrownMap() throws {
        try gate.withExclusive {
            try check(mdb_env_set_mapsize(env, 0), "adopting the map size grown by another process")
        }
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
        defer { gate.unlockShared() }
        let result: R
        do {
            result = try body(WriteTransaction(pointer: txn, maxKeySize: maxKeySize))
        } catch {
            mdb_txn_abort(txn)
            throw error
        }
        // mdb_txn_commit frees the transaction whether or not it succeeds: never abort after it.
        try check(mdb_txn_commit(txn), "mdb_txn_commit")
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

// MARK: - Registry

/// Identifies a directory by device and inode, so two spellings of one path share one environment.
package struct FileID: Hashable, Sendable {
    package let device: UInt64
    package let inode: UInt64
}

/// The process-wide table of open environments.
final class EnvironmentRegistry: Sendable {
    static let shared = EnvironmentRegistry()

    private struct Entry {
        let core: EnvironmentCore
        var users: Int
    }

    private let entries = Mutex<[FileID: Entry]>([:])

    func open(directory: String, options: EnvironmentOptions) throws -> EnvironmentCore {
        // Opening and closing run under the lock, so an environment is never opened while
        // another one on the same file is still closing.
        try entries.withLock { entries in
            let created = try Self.prepareDirectory(directory, create: options.createIfMissing)
            if var entry = entries[created.fileID] {
                guard options.readOnly || !entry.core.isReadOnly else {
                    throw LMDBError(
                        code: EROFS, message: "\(directory) is open read-only in this process, which may not write it")
                }
                entry.users += 1
                entries[created.fileID] = entry
                return entry.core
            }
            do {
                let core = try EnvironmentCore(directory: directory, fileID: created.fileID, options: options)
                entries[created.fileID] = Entry(core: core, users: 1)
                return core
            } catch {
                // A store that could not be created in a directory this open made leaves nothing
                // behind (not a lock file alone): no other process had a reason to look there.
                if !created.directories.isEmpty {
                    for file in ["data.mdb", "lock.mdb"] { unlink(directory + "/" + file) }
                    for made in created.directories.reversed() { rmdir(made) }
                }
                throw error
            }
        }
    }

    func release(_ core: EnvironmentCore) {
        entries.withLock { entries in
            guard var entry = entries[core.fileID] else { return }
            entry.users -= 1
            if entry.users > 0 {
                entries[core.fileID] = entry
            } else {
                entries[core.fileID] = nil
                core.close()
            }
        }
    }

    /// Checks that `directory` is a directory, creating it (and missing parents, mode 0700) when
    /// asked; returns its identity and the directories it created, outermost first.
    private static func prepareDirectory(
        _ directory: String, create: Bool
    ) throws -> (fileID: FileID, directories: [String]) {
        var info = stat()
        var made: [String] = []
        if stat(directory, &info) != 0 {
            let error = errno
            guard error == ENOENT, create else {
                throw LMDBError(code: error, message: "\(String(cString: strerror(error))): \(directory)")
            }
            made = try makeDirectories(directory)
            guard stat(directory, &info) == 0 else {
                throw LMDBError(code: errno, message: "\(String(cString: strerror(errno))): \(directory)")
            }
        }
        guard (info.st_mode & S_IFMT) == S_IFDIR else {
            throw LMDBError(code: ENOTDIR, message: "not a directory: \(directory)")
        }
        return (FileID(device: UInt64(info.st_dev), inode: UInt64(info.st_ino)), made)
    }

    /// `mkdir -p` with mode 0700, reporting the `errno` of the step that failed (`ENOSPC`,
    /// `EACCES`, `EROFS`, …) rather than one code for every failure.
    private static func makeDirectories(_ directory: String) throws -> [String] {
        var missing: [String] = []
        var path = directory
        while !path.isEmpty, path != "/", access(path, F_OK) != 0 {
            missing.append(path)
            path = (path as NSString).deletingLastPathComponent
        }
        var made: [String] = []
        for path in missing.reversed() {
            if mkdir(path, 0o700) == 0 {
                made.append(path)
            } else if errno != EEXIST {
                let error = errno
                for path in made.reversed() { rmdir(path) }
                throw LMDBError(
                    code: error, message: "\(String(cString: strerror(error))): cannot create directory \(path)")
            }
        }
        return made
    }
}
