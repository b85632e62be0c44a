import RillStorage

/// How a process opens a store: what its saves flush, how large its map starts, and whether it
/// only reads.
///
/// The storage layer's options stay behind `Store`; callers above it (containers, the CLI, the
/// daemon) say what they want in these terms.
package struct StoreOptions: Sendable, Hashable {
    /// How much of a save reaches the disk before the save returns.
    package enum Durability: Sendable, Hashable {
        /// Data and the page that points to it are flushed (the default).
        case full
        /// Data is flushed, the page that points to it is not: a power cut may undo the last save.
        case relaxed
        /// Nothing is flushed at save: a power cut may undo every save since the last flush, or
        /// leave the store damaged (LMDB's `MDB_NOSYNC`: the disk may hold a commit's meta page
        /// without the pages it points to).
        case unsynced
    }

    /// How much of a save reaches the disk before the save returns.
    package var durability: Durability
    /// The size of the map when the store is opened (it grows as the store fills).
    package var initialMapSize: Int
    /// The process only reads: when it may not open the store for writing, it opens it read-only.
    package var readOnly: Bool

    package init(durability: Durability = .full, initialMapSize: Int = 64 << 20, readOnly: Bool = false) {
        self.durability = durability
        self.initialMapSize = initialMapSize
        self.readOnly = readOnly
    }

    /// The options of the storage layer these stand for.
    func environmentOptions(create: Bool) -> EnvironmentOptions {
        let syncMode: EnvironmentOptions.SyncMode =
            switch durability {
            case .full: .full
            case .relaxed: .noMetaSync
            case .unsynced: .noSync
            }
        return EnvironmentOptions(
            syncMode: syncMode, initialMapSize: initialMapSize, createIfMissing: create, readOnly: readOnly)
    }
}
