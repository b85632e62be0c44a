import Foundation

/// Where a container keeps its store, and how it writes to it.
///
/// For example:
///
/// ```swift
/// let configuration = ModelConfiguration(url: URL(filePath: "/var/lib/myapp/library.rill"))
/// let container = try ModelContainer(for: Book.self, configurations: configuration)
/// ```
public struct ModelConfiguration: Sendable, Hashable {
    /// How much of a save reaches the disk before `save()` returns.
    public struct Durability: Sendable, Hashable, CustomStringConvertible {
        private let level: Int
        private init(level: Int) { self.level = level }

        /// Every save is flushed to disk before it returns: it survives a crash of the process,
        /// of the operating system and a power cut. The default.
        public static let full = Durability(level: 0)
        /// Each save flushes its data but not the page that points to it. A crash of the process
        /// loses nothing; a power cut or operating-system crash may undo the last save (never
        /// half of one, never an older one). Saves are cheaper. Observers (live queries, history
        /// followers, the daemon's subscribers) are told of a save once it is flushed: their
        /// process flushes the store file first, once for all the saves it tells of.
        public static let relaxed = Durability(level: 1)
        /// Nothing is flushed at save; the operating system writes when it chooses (typically
        /// within 30 seconds on Linux), in the order it chooses. A crash of the process loses
        /// nothing. A power cut or operating-system crash may undo every save since the last flush,
        /// and may leave the store damaged: the disk can hold a save's last page, the one that
        /// points to its data, without the data, and later saves reuse pages that flushed saves
        /// point to. A damaged store does not open (or `rill check` names the damage) and only a
        /// backup brings it back: keep this setting for data that can be rebuilt. Saves stay
        /// atomic for every process that reads the store; the fastest setting. Observers are told
        /// of a save once it is flushed, as with ``relaxed``.
        public static let unsynced = Durability(level: 2)

        public var description: String { ["full", "relaxed", "unsynced"][level] }

        var storeDurability: StoreOptions.Durability {
            switch level {
            case 1: .relaxed
            case 2: .unsynced
            default: .full
            }
        }
    }

    /// The store directory (it holds `data.mdb` and `lock.mdb`). Created, with mode 0700, when missing.
    public var url: URL
    /// A name for the configuration, for messages.
    public var name: String
    /// How durable each save is. Default: ``Durability/full``.
    public var durability: Durability
    /// Whether contexts may save. A container that does not allow saving never creates a store.
    public var allowsSave: Bool
    /// Whether the store lives in a temporary directory that is removed with the container.
    public let isStoredInMemoryOnly: Bool
    /// The size, in bytes, of the memory map to start with when the store is first opened by
    /// this process. The map grows by itself (doubling) whenever a save needs more room, so this
    /// only matters for tuning. Default: 64 MiB.
    public var initialMapSize: Int
    /// The replicated log the store's commits go to first, shared with the stores of other
    /// machines; nil (the default) for the store's own log alone. See ``ReplicatedLog``.
    ///
    /// A store opened with one is marked as following it: a process that opens it without the log
    /// may read it, not save to it. The container must allow saving: it applies the log's commits.
    public var log: ReplicatedLog?

    /// Model types the container stores besides those it is made for (SwiftData's configuration
    /// names the types its store holds); nil for none.
    public var schema: Schema?

    /// A configuration for a store in the directory at `url`.
    public init(
        _ name: String? = nil,
        schema: Schema? = nil,
        url: URL,
        durability: Durability = .full,
        allowsSave: Bool = true,
        initialMapSize: Int = 64 << 20,
        log: ReplicatedLog? = nil
    ) {
        self.url = url
        self.schema = schema
        self.log = log
        self.name = name ?? url.lastPathComponent
        self.durability = durability
        self.allowsSave = allowsSave
        self.isStoredInMemoryOnly = false
        self.initialMapSize = initialMapSize
    }

    /// A configuration for the store named `name` in the default location
    /// (``defaultDirectory``), or a temporary store when `isStoredInMemoryOnly` is true.
    public init(
        _ name: String? = nil, schema: Schema? = nil, isStoredInMemoryOnly: Bool = false, allowsSave: Bool = true,
        log: ReplicatedLog? = nil
    ) {
        self.schema = schema
        self.log = log
        let name = name ?? "default"
        if isStoredInMemoryOnly {
            let base = FileManager.default.fileExists(atPath: "/dev/shm") ? "/dev/shm" : NSTemporaryDirectory()
            url = URL(fileURLWithPath: base).appendingPathComponent("rill-\(name)-\(UUID().uuidString)")
        } else {
            url = Self.defaultDirectory.appendingPathComponent(name + ".rill")
        }
        self.name = name
        self.durability = isStoredInMemoryOnly ? .unsynced : .full
        self.allowsSave = allowsSave
        self.isStoredInMemoryOnly = isStoredInMemoryOnly
        self.initialMapSize = 64 << 20
    }

    /// Where stores without an explicit URL live: `$RILL_HOME` when set, else
    /// `$XDG_DATA_HOME/rill`, else `~/.local/share/rill`.
    public static var defaultDirectory: URL {
        let environment = ProcessInfo.processInfo.environment
        if let home = environment["RILL_HOME"], !home.isEmpty {
            return URL(fileURLWithPath: home)
        }
        if let data = environment["XDG_DATA_HOME"], !data.isEmpty {
            return URL(fileURLWithPath: data).appendingPathComponent("rill")
        }
        return FileManager.default.homeDirectoryForCurrentUser
            .appendingPathComponent(".local/share/rill")
    }
}
