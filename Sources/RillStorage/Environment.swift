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
    let writer: WriterThread
    /// Keeps `mdb_env_set_mapsize` away from live transactions. LMDB allows changing the map
    /// size only while the process has no transaction open, and does not check it. Every
    /// transaction holds the gate shared for its whole life; growing the map (after
    /// `MDB_MAP_FULL`) or adopting a size grown by another process (after `MDB_MAP_RESIZED`)
    /// holds it exclusively.
    private let gate = ReadWriteLock()
    private let databases = Mutex<[String: Database]>([:])

    init(directory: String, fileID: FileID, options: EnvironmentOptions) throws {
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
            try check(mdb_env_open(env, directory, flags, 0o600), directory)
        } catch {
            mdb_env_close(env)
            throw error
        }
        self.env = env
        self.directory = directory
        self.options = options
        self.fileID = fileID
        self.maxKeySize = Int(mdb_env_get_maxkeysize(env))
        self.writer = WriterThread(name: "rill.writer")
        // Reader slots left behind by killed processes would pin old pages forever.
        _ = try? checkReaders()
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

    func write<R>(_ body: (WriteTransaction) throws -> R, meanwhile: () -> Void) throws -> R {
        try writer.runAndWait(
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
            let fileID = try Self.prepareDirectory(directory, create: options.createIfMissing)
            if var entry = entries[fileID] {
                entry.users += 1
                entries[fileID] = entry
                return entry.core
            }
            let core = try EnvironmentCore(directory: directory, fileID: fileID, options: options)
            entries[fileID] = Entry(core: core, users: 1)
            return core
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

    private static func prepareDirectory(_ directory: String, create: Bool) throws -> FileID {
        var info = stat()
        if stat(directory, &info) != 0 {
            let error = errno
            guard error == ENOENT, create else {
                throw LMDBError(code: error, message: "\(String(cString: strerror(error))): \(directory)")
            }
            do {
                try FileManager.default.createDirectory(
                    atPath: directory,
                    withIntermediateDirectories: true,
                    attributes: [.posixPermissions: 0o700]
                )
            } catch {
                throw LMDBError(code: EACCES, message: "cannot create directory \(directory): \(error)")
            }
            guard stat(directory, &info) == 0 else {
                throw LMDBError(code: errno, message: "\(String(cString: strerror(errno))): \(directory)")
            }
        }
        guard (info.st_mode & S_IFMT) == S_IFDIR else {
            throw LMDBError(code: ENOTDIR, message: "not a directory: \(directory)")
        }
        return FileID(device: UInt64(info.st_dev), inode: UInt64(info.st_ino))
    }
}
