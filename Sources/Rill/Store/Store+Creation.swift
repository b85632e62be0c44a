import Foundation
import RillStorage

extension Store {
    // MARK: - Creating a store atomically

    /// Runs `body` with the store in `directory`; when there is no store there yet, the store is created so that
    /// it appears only if `body` succeeds.
    ///
    /// An existing store is opened and handed to `body`, whose own transactions decide what it keeps. A missing
    /// one is built in a staging directory beside it (`.<name>.rill-new-XXXXXX`, or inside `directory` when that
    /// is an existing directory without a store), then moved into place with a rename once `body` returned: when
    /// `body` throws, the staging directory and any parent directory created for it are removed, and the path is
    /// left as it was (no directory, or the empty directory it was). Other processes never see the new store
    /// before it is complete; if one creates a store at the same path meanwhile, this call fails and leaves
    /// that store alone.
    ///
    /// `body` must not keep the store: it is closed when `body` returns, before the move. Errors name
    /// `directory`, not the staging directory. `progress` is the store's (see `init(directory:options:create:progress:)`).
    package static func creatingIfMissing<R>(
        directory: String, options: StoreOptions, progress: (@Sendable (StoreProgress) -> Void)? = nil,
        _ body: (Store) throws -> R
    ) throws -> R {
        var info = stat()
        let exists = stat(directory, &info) == 0
        if (exists && ((info.st_mode & S_IFMT) != S_IFDIR || access(directory + "/data.mdb", F_OK) == 0))
            || (!exists && errno != ENOENT)
        {
            // A store (or something opening reports as an error: a plain file, a path it may not look into).
            return try body(Store(directory: directory, options: options, create: true, progress: progress))
        }
        removeAbandonedStaging(for: directory, exists: exists)
        var created: [String] = []
        var staging: String?
        do {
            let place = try stagingDirectory(for: directory, exists: exists, created: &created)
            staging = place
            let result: R = try {
                // The only reference to the store: it closes when this closure returns.
                let store = try Store(directory: place, options: options, create: true, progress: progress)
                return try body(store)
            }()
            try publish(place, at: directory, intoExisting: exists)
            return result
        } catch {
            if let staging { try? FileManager.default.removeItem(atPath: staging) }
            for parent in created.reversed() { rmdir(parent) }
            guard let staging, let error = error as? RillError else { throw error }
            throw RillError(
                error.code, error.message.replacingOccurrences(of: staging, with: directory),
                underlyingError: error.underlyingError)
        }
    }

    /// Makes a new, empty staging directory for a store to be published at `directory`, creating the parent
    /// directories it lacks (listed in `created`, outermost first).
    private static func stagingDirectory(for directory: String, exists: Bool, created: inout [String]) throws -> String
    {
        let template: String
        if exists {
            template = directory + "/.rill-new-XXXXXX"
        } else {
            let (parent, name) = split(directory)
            var missing: [String] = []
            var ancestor = parent
            while !ancestor.isEmpty, ancestor != "/", access(ancestor, F_OK) != 0 {
                missing.append(ancestor)
                ancestor = split(ancestor).parent
            }
            for missingParent in missing.reversed() {
                guard mkdir(missingParent, 0o700) == 0 || errno == EEXIST else {
                    throw creationError(errno, missingParent)
                }
                created.append(missingParent)
            }
            let prefix = parent.isEmpty ? "" : parent == "/" ? "/" : parent + "/"
            template = prefix + "." + name + ".rill-new-XXXXXX"
        }
        var bytes = Array(template.utf8CString)
        guard mkdtemp(&bytes) != nil else { throw creationError(errno, directory) }
        // mkdtemp replaced the X's in place; the array ends with the terminating zero.
        return String(decoding: bytes.dropLast().map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }

    /// Removes the staging directories of earlier creations of a store at `directory` that were
    /// stopped before they ended (a process killed during `rill import`): those no process has
    /// open, made over a minute ago (a creation in progress opens its store at once).
    private static func removeAbandonedStaging(for directory: String, exists: Bool) {
        let (parent, name) = exists ? (directory, "") : split(directory)
        let folder = parent.isEmpty ? "." : parent
        let prefix = exists ? ".rill-new-" : "." + name + ".rill-new-"
        guard let entries = try? FileManager.default.contentsOfDirectory(atPath: folder) else { return }
        let now = Date()
        for entry in entries where entry.hasPrefix(prefix) && entry.count == prefix.count + 6 {
            let path = folder + "/" + entry
            var info = stat()
            guard lstat(path, &info) == 0, info.st_mode & S_IFMT == S_IFDIR, info.st_uid == geteuid(),
                now.timeIntervalSince1970 - Double(info.st_mtim.tv_sec) > 60, OpenLock.isUnused(directory: path)
            else { continue }
            try? FileManager.default.removeItem(atPath: path)
        }
    }

    /// Moves the complete store in `staging` to `directory`, never over a store that appeared meanwhile, and
    /// makes the move durable.
    private static func publish(_ staging: String, at directory: String, intoExisting: Bool) throws {
        if intoExisting {
            // link(2) refuses to replace an existing file; the lock file is not needed (LMDB makes a new one).
            guard link(staging + "/data.mdb", directory + "/data.mdb") == 0 else {
                if errno == EEXIST {
                    throw RillError(.storage, "another process created a store in \(directory) meanwhile")
                }
                throw creationError(errno, directory)
            }
            try? FileManager.default.removeItem(atPath: staging)
            syncDirectory(directory)
        } else {
            // rename(2) replaces nothing but an empty directory: a store created meanwhile stays.
            guard rename(staging, directory) == 0 else {
                if errno == ENOTEMPTY || errno == EEXIST {
                    throw RillError(.storage, "another process created a store in \(directory) meanwhile")
                }
                throw creationError(errno, directory)
            }
            syncDirectory(split(directory).parent)
        }
    }

    /// A path's parent directory (empty for a name relative to the current directory) and last component,
    /// trailing slashes aside.
    private static func split(_ path: String) -> (parent: String, name: String) {
        var trimmed = Substring(path)
        while trimmed.count > 1, trimmed.hasSuffix("/") { trimmed = trimmed.dropLast() }
        guard let slash = trimmed.lastIndex(of: "/") else { return ("", String(trimmed)) }
        var parent = trimmed[..<slash]
        while parent.count > 1, parent.hasSuffix("/") { parent = parent.dropLast() }
        return (parent.isEmpty ? "/" : String(parent), String(trimmed[trimmed.index(after: slash)...]))
    }

    /// Flushes a directory's entries (a new name in it) to disk.
    private static func syncDirectory(_ path: String) {
        let descriptor = open(path.isEmpty ? "." : path, O_RDONLY | O_DIRECTORY)
        guard descriptor >= 0 else { return }
        fsync(descriptor)
        close(descriptor)
    }

    /// A failure to make a directory or a name for the new store, with its cause.
    private static func creationError(_ code: Int32, _ path: String) -> any Error {
        let underlying = LMDBError(code: code, message: "\(String(cString: strerror(code))): \(path)")
        let message = "cannot create \(path): \(String(cString: strerror(code)))"
        switch code {
        case EACCES, EPERM, EROFS: return RillError(.permissionDenied, message, underlyingError: underlying)
        case ENOSPC, EDQUOT: return RillError(.diskFull, message, underlyingError: underlying)
        case ENOTDIR: return RillError(.notAStore, message, underlyingError: underlying)
        default: return RillError(.storage, message, underlyingError: underlying)
        }
    }
}
