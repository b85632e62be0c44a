import CLMDB
import Foundation
import RillLocks

/// The process-wide table of open environments.
final class EnvironmentRegistry: Sendable {
    static let shared = EnvironmentRegistry()

    private struct Entry {
        let core: EnvironmentCore
        var users: Int
    }

    private let entries = Lock<[FileID: Entry]>([:])

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
