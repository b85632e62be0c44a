import Foundation
import RillStorage

extension Store {
    // MARK: - Backup and restore

    /// Writes a consistent, compacted copy of the store to `destination` and returns the sequence of the last
    /// commit it holds.
    ///
    /// The copy is LMDB's own (`mdb_env_copy2` with `MDB_CP_COMPACT`): it runs in a read transaction of its own,
    /// so it is the store as of one commit, and writers in this process and in others go on meanwhile (they only
    /// keep the pages that snapshot reads from being reused until it ends). `destination` is a directory that
    /// does not exist (its parent does) or is empty; the copy becomes its `data.mdb`. It is written under a
    /// hidden staging name inside `destination`, flushed, then linked into place, so a crash leaves no
    /// `data.mdb` that is not whole.
    ///
    /// - Throws: `.destinationNotEmpty` naming `destination` when it holds anything (a store, or other files):
    ///   nothing is written then.
    ///
    /// A destination whose name ends in `.mdb` (and that does not exist) is a single file
    /// instead: the copy is written in a hidden staging directory beside it, flushed, and linked
    /// to that name, which is never replaced. Such a file is a store's `data.mdb`, which
    /// ``restore(backup:to:)`` takes too.
    @discardableResult
    package func backup(to destination: String) throws -> UInt64 {
        if Self.isFileDestination(destination) { return try Self.copy(environment, toFile: destination) }
        return try Self.copy(environment, to: destination)
    }

    /// Restores the backup in `backup` as a new store at `destination`, after checking it.
    ///
    /// The backup must pass ``check()`` (its records and indexes equal a replay of its log). The restored store is
    /// a copy written as ``backup(to:)`` writes one: `destination` must not exist or be an empty directory, so a
    /// restore never replaces a store that a process may have open. Returns the sequence of the restored store.
    ///
    /// - Throws: `.destinationNotEmpty` when `destination` holds anything, with the way to go on (stop the
    ///   writers, move the old store aside, restore to its path); `.corruptStore` when the backup fails its
    ///   check, with the first problem.
    @discardableResult
    package static func restore(backup: String, to destination: String) throws -> UInt64 {
        try refuseNonEmpty(destination, restoring: true)
        var isDirectory: ObjCBool = false
        if FileManager.default.fileExists(atPath: backup, isDirectory: &isDirectory), !isDirectory.boolValue {
            // A backup of one file: read as a store from a staging directory that links it.
            let staging = try stagingDirectory(beside: destination)
            defer { try? FileManager.default.removeItem(atPath: staging) }
            guard link(backup, staging + "/data.mdb") == 0 || copyFile(backup, to: staging + "/data.mdb") else {
                throw copyError(errno, backup)
            }
            return try restoreChecked(from: staging, named: backup, to: destination)
        }
        return try restoreChecked(from: backup, named: backup, to: destination)
    }

    /// Restores the store in `directory` (the backup `name`) to `destination`, after checking it.
    private static func restoreChecked(
        from directory: String, named name: String, to destination: String
    ) throws
        -> UInt64
    {
        let backup = name
        let source = try Store(directory: directory, options: StoreOptions(readOnly: true), create: false)
        let report = try source.check()
        guard report.isHealthy else {
            throw RillError(
                .corruptStore,
                "the backup in \(backup) does not pass rill check: \(report.problems.first ?? "a problem")")
        }
        return try copy(source.environment, to: destination, restoring: true)
    }

    private static func copy(
        _ environment: Environment, to destination: String, restoring: Bool = false
    ) throws
        -> UInt64
    {
        try refuseNonEmpty(destination, restoring: restoring)
        var madeDirectory = false
        if access(destination, F_OK) != 0 {
            // Another backup may make it meanwhile; whichever links its data.mdb first wins, the other fails.
            if mkdir(destination, 0o700) == 0 {
                madeDirectory = true
            } else if errno != EEXIST {
                throw copyError(errno, destination)
            }
        }
        let staging: String
        do {
            staging = try stagingDirectory(in: destination, for: destination)
        } catch {
            if madeDirectory { rmdir(destination) }
            throw error
        }
        defer {
            try? FileManager.default.removeItem(atPath: staging)
        }
        do {
            let sequence = try writeCopy(of: environment, into: staging, for: destination)
            // link(2) never replaces a file: a store that appeared meanwhile stays.
            guard link(staging + "/data.mdb", destination + "/data.mdb") == 0 else {
                if errno == EEXIST { throw notEmptyError(destination, restoring: restoring) }
                throw copyError(errno, destination)
            }
            syncDirectory(destination)
            return sequence
        } catch {
            try? FileManager.default.removeItem(atPath: staging)
            if madeDirectory { rmdir(destination) }
            guard let error = error as? RillError else { throw error }
            throw RillError(
                error.code, error.message.replacingOccurrences(of: staging, with: destination),
                underlyingError: error.underlyingError)
        }
    }

    /// Whether a backup to `destination` is one file: a name ending in `.mdb` that does not exist.
    static func isFileDestination(_ destination: String) -> Bool {
        destination.hasSuffix(".mdb") && access(destination, F_OK) != 0
    }

    /// A new hidden directory beside `path` (in its parent), for staging a copy.
    private static func stagingDirectory(beside path: String) throws -> String {
        let parent = (path as NSString).deletingLastPathComponent
        return try stagingDirectory(in: parent.isEmpty ? "." : parent, for: path)
    }

    /// A new hidden directory in `directory` (`.rill-copy-XXXXXX`), for staging a copy to
    /// `destination` (which errors name).
    private static func stagingDirectory(in directory: String, for destination: String) throws -> String {
        var template = Array((directory + "/.rill-copy-XXXXXX").utf8CString)
        guard mkdtemp(&template) != nil else { throw copyError(errno, destination) }
        return String(decoding: template.dropLast().map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }

    /// Copies the file at `source` to `destination` (which must not exist), flushed; false on failure.
    private static func copyFile(_ source: String, to destination: String) -> Bool {
        do {
            try FileManager.default.copyItem(atPath: source, toPath: destination)
        } catch {
            return false
        }
        let descriptor = open(destination, O_RDONLY | O_CLOEXEC)
        guard descriptor >= 0 else { return false }
        defer { close(descriptor) }
        return fsync(descriptor) == 0
    }

    /// Writes the copy to the single file `destination` (see ``backup(to:)``).
    private static func copy(_ environment: Environment, toFile destination: String) throws -> UInt64 {
        let staging = try stagingDirectory(beside: destination)
        defer { try? FileManager.default.removeItem(atPath: staging) }
        do {
            let sequence = try writeCopy(of: environment, into: staging, for: destination)
            // link(2) never replaces a file: one that appeared meanwhile stays.
            guard link(staging + "/data.mdb", destination) == 0 else {
                if errno == EEXIST {
                    throw RillError(.destinationNotEmpty, "\(destination) exists; give a file name that does not")
                }
                throw copyError(errno, destination)
            }
            let parent = (destination as NSString).deletingLastPathComponent
            syncDirectory(parent.isEmpty ? "." : parent)
            return sequence
        } catch let error as RillError {
            throw RillError(
                error.code,
                error.message.replacingOccurrences(of: staging + "/data.mdb", with: destination)
                    .replacingOccurrences(of: staging, with: destination),
                underlyingError: error.underlyingError)
        }
    }

    /// Writes the compacted copy of `environment` to `staging/data.mdb`, flushed, and returns the
    /// sequence of the last commit it holds — read from the copy itself, so it is exactly the
    /// commit the copy holds. Errors name `destination`.
    private static func writeCopy(
        of environment: Environment, into staging: String, for destination: String
    ) throws -> UInt64 {
        let descriptor = open(staging + "/data.mdb", O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0o600)
        guard descriptor >= 0 else { throw copyError(errno, destination) }
        do {
            defer { close(descriptor) }
            do { try environment.copyCompacted(to: descriptor) } catch {
                throw translate(error, directory: destination)
            }
            guard fsync(descriptor) == 0 else { throw copyError(errno, destination) }
        }
        let copy = try Store(directory: staging, options: StoreOptions(readOnly: true), create: false)
        return try copy.read { try copy.log.head(in: $0) }
    }

    /// Throws unless `path` is missing or an empty directory.
    private static func refuseNonEmpty(_ path: String, restoring: Bool) throws {
        var info = stat()
        guard stat(path, &info) == 0 else {
            if errno == ENOENT { return }
            throw copyError(errno, path)
        }
        guard (info.st_mode & S_IFMT) == S_IFDIR else { throw notEmptyError(path, restoring: restoring) }
        let names = (try? FileManager.default.contentsOfDirectory(atPath: path)) ?? []
        guard names.isEmpty else { throw notEmptyError(path, restoring: restoring) }
    }

    private static func notEmptyError(_ path: String, restoring: Bool) -> RillError {
        var isDirectory: ObjCBool = false
        if FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory), !isDirectory.boolValue {
            return RillError(.destinationNotEmpty, "\(path) exists (a file); give a path that does not exist")
        }
        let holdsStore = access(path + "/data.mdb", F_OK) == 0
        let what = holdsStore ? "holds a store" : "is not an empty directory"
        let advice =
            restoring
            ? "; to replace a store, stop every process that has it open, move it aside, then restore to its path"
            : "; give a directory that does not exist or is empty"
        return RillError(.destinationNotEmpty, "\(path) \(what)\(advice)")
    }

    private static func syncDirectory(_ path: String) {
        let descriptor = open(path, O_RDONLY | O_DIRECTORY)
        guard descriptor >= 0 else { return }
        fsync(descriptor)
        close(descriptor)
    }

    private static func copyError(_ code: Int32, _ path: String) -> any Error {
        let message = "cannot copy the store to \(path): \(String(cString: strerror(code)))"
        let underlying = LMDBError(code: code, message: "\(String(cString: strerror(code))): \(path)")
        switch code {
        case EACCES, EPERM, EROFS: return RillError(.permissionDenied, message, underlyingError: underlying)
        case ENOSPC, EDQUOT: return RillError(.diskFull, message, underlyingError: underlying)
        default: return RillError(.storage, message, underlyingError: underlying)
        }
    }
}
