import Foundation
import RillStorage

/// What a directory without a complete store holds, as far as a creation got: the one place that
/// decides how opening it ends.
///
/// A store exists once its first write transaction committed: the `meta` database with the format
/// marker, and the `log` database (see `Store.init`). A process killed while it creates one leaves
/// one of the states before that, in this order: no directory; a directory without `data.mdb` (LMDB
/// makes `lock.mdb` first); an empty `data.mdb` (LMDB made the file and had not written its two
/// meta pages); an environment that never committed a transaction (the meta pages only). None holds
/// anything saved. Opening with creation allowed finishes the store in any of them; opening without
/// it is `.storeNotFound`, saying so, never `.notAStore`. An environment holding other databases and
/// no `meta` is somebody else's: `.notAStore` either way.
///
/// A `data.mdb` with a meta page but shorter than its two (a write cut inside the first page pair,
/// or a store file cut short) is left to `DataFileHeader`, which reports the file cut short: its
/// bytes are the same as those of a one-commit store cut after its first page.
enum StoreCreationState: Equatable {
    /// Nothing at the path.
    case missing
    /// A directory without `data.mdb`.
    case noDataFile
    /// A `data.mdb` of zero bytes.
    case emptyDataFile
    /// An LMDB environment that never committed a transaction: no named database, transaction id 0.
    case noCommit
    /// An LMDB environment without databases that committed transactions (which left nothing).
    case emptyEnvironment
    /// An LMDB environment holding databases, none of them `meta`.
    case otherEnvironment

    /// The state of `directory` before its environment is opened, or nil when the environment
    /// decides (a `data.mdb` with content, or a path that is not a directory).
    static func beforeOpening(_ directory: String) -> StoreCreationState? {
        var isDirectory: ObjCBool = false
        guard FileManager.default.fileExists(atPath: directory, isDirectory: &isDirectory) else { return .missing }
        guard isDirectory.boolValue else { return nil }
        var info = stat()
        guard stat(directory + "/data.mdb", &info) == 0 else { return errno == ENOENT ? .noDataFile : nil }
        return info.st_size == 0 ? .emptyDataFile : nil
    }

    /// The state of an opened environment without a `meta` database.
    static func withoutMeta(_ environment: Environment) throws -> StoreCreationState {
        guard try environment.databaseNames().isEmpty else { return .otherEnvironment }
        return environment.lastTransactionID == 0 ? .noCommit : .emptyEnvironment
    }

    /// How opening `directory` in this state ends: nil when it goes on (creating the store when
    /// `create`), else the error.
    ///
    /// With `create`, an environment without databases gets its store even when it committed
    /// transactions before (they left nothing); without it, only one that never committed is a
    /// creation cut short.
    func error(directory: String, create: Bool) -> RillError? {
        func unfinished(_ dataFile: String) -> RillError {
            RillError(
                .storeNotFound,
                "no store at \(directory): its creation was cut short before anything was saved there "
                    + "(\(directory)/data.mdb \(dataFile)); `rill import` or a ModelContainer that saves finishes creating it"
            )
        }
        let notAStore = RillError(.notAStore, "\(directory) holds an LMDB environment that is not a Rill store")
        switch self {
        case .missing: return create ? nil : RillError(.storeNotFound, "no store at \(directory)")
        case .noDataFile:
            return create ? nil : RillError(.storeNotFound, "no store at \(directory) (the directory has no data.mdb)")
        case .emptyDataFile: return create ? nil : unfinished("is empty")
        case .noCommit: return create ? nil : unfinished("holds no commit")
        case .emptyEnvironment: return create ? nil : notAStore
        case .otherEnvironment: return notAStore
        }
    }
}
