/// How an environment is opened.
package struct EnvironmentOptions: Sendable, Hashable {
    /// How much of a commit reaches the disk before the commit returns.
    package enum SyncMode: Sendable, Hashable {
        /// Data and meta pages are flushed at every commit: a commit that returned survives a power cut.
        case full
        /// `MDB_NOMETASYNC`: the meta page is flushed lazily; a power cut may undo the last commit.
        case noMetaSync
        /// `MDB_NOSYNC`: nothing is flushed at commit; a power cut may undo every commit since the
        /// operating system last wrote its buffers, or leave the environment damaged: the disk may
        /// hold a meta page without the pages it points to. A process crash loses nothing.
        case noSync
    }

    /// Durability of commits. Default: `.full`.
    package var syncMode: SyncMode
    /// The map size to start with when this process is the first to open the file. LMDB keeps
    /// the larger of this and the size recorded in the file; the map grows by itself when full.
    package var initialMapSize: Int
    /// How many named databases the environment can hold.
    package var maxDatabases: UInt32
    /// How many read transactions may be open at once across all processes.
    package var maxReaders: UInt32
    /// Whether a missing directory is created (mode 0700).
    package var createIfMissing: Bool
    /// Whether this use of the environment only reads. The environment is still opened for
    /// writing when the process may write; only when it may not (no write permission, a
    /// read-only file system) is it opened read-only (`MDB_RDONLY`) instead of failing. See
    /// `Environment` for what LMDB then needs.
    package var readOnly: Bool

    package init(
        syncMode: SyncMode = .full,
        initialMapSize: Int = 64 << 20,
        maxDatabases: UInt32 = 256,
        maxReaders: UInt32 = 510,
        createIfMissing: Bool = true,
        readOnly: Bool = false
    ) {
        self.syncMode = syncMode
        self.initialMapSize = initialMapSize
        self.maxDatabases = maxDatabases
        self.maxReaders = maxReaders
        self.createIfMissing = createIfMissing
        self.readOnly = readOnly
    }
}
