import Foundation
import RillStorage
import RillTestSupport
import Testing

@testable import Rill

/// The directories a process killed while it creates a store leaves, built one by one: opening one
/// without creation says that no store is there yet (never that it is somebody else's file), and
/// opening it with creation finishes the store.
@Suite struct InterruptedCreationTests {
    let directory = TemporaryDirectory()

    /// How far a creation got, in the order of its steps.
    enum Cut: String, CaseIterable, CustomStringConvertible {
        /// The directory was made.
        case emptyDirectory
        /// The lock file was made.
        case lockFileOnly
        /// LMDB created `data.mdb` and wrote nothing into it.
        case emptyDataFile
        /// LMDB wrote its two meta pages; no transaction committed.
        case noCommit

        var description: String { rawValue }

        /// Whether `data.mdb` exists.
        var hasDataFile: Bool { self == .emptyDataFile || self == .noCommit }
    }

    /// A directory left by a creation cut at `cut`.
    func make(_ cut: Cut) throws -> String {
        let path = directory.path(cut.rawValue)
        if cut == .noCommit {
            let environment = try Environment(directory: path)
            #expect(environment.lastTransactionID == 0)
            #expect(try environment.databaseNames().isEmpty)
            return path
        }
        try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: false)
        if cut != .emptyDirectory { _ = FileManager.default.createFile(atPath: path + "/lock.mdb", contents: nil) }
        if cut == .emptyDataFile { _ = FileManager.default.createFile(atPath: path + "/data.mdb", contents: nil) }
        return path
    }

    func dataFile(_ path: String) -> Data? {
        FileManager.default.contents(atPath: path + "/data.mdb")
    }

    @Test(arguments: Cut.allCases)
    func openingWithoutCreationFindsNoStoreAndWritesNothing(_ cut: Cut) throws {
        let path = try make(cut)
        let before = dataFile(path)
        for options in [StoreOptions(), StoreOptions(readOnly: true)] {
            let error = #expect(throws: RillError.self) {
                _ = try Store(directory: path, options: options, create: false)
            }
            #expect(error?.code == .storeNotFound, "\(String(describing: error))")
            #expect(error?.message.hasPrefix("no store at \(path)") == true, "\(String(describing: error))")
            if cut.hasDataFile {
                #expect(error?.message.contains("creation was cut short before anything was saved") == true)
                #expect(error?.message.contains(path + "/data.mdb") == true)
            }
        }
        let readOnly = #expect(throws: RillError.self) {
            _ = try ModelContainer(
                for: Counter.self,
                configurations: ModelConfiguration(url: URL(fileURLWithPath: path), allowsSave: false))
        }
        #expect(readOnly?.code == .storeNotFound)
        #expect(try StoreAudit.ofStoreIfAny(in: path) == nil)
        #expect(dataFile(path) == before, "opening without creation wrote \(path)/data.mdb")
    }

    @Test(arguments: [Cut.emptyDataFile, .noCommit])
    func commandsSayTheCreationWasCutShort(_ cut: Cut) throws {
        let path = try make(cut)
        let before = dataFile(path)
        for command in ["log", "stats", "check"] {
            let run = try runBuilt("rill", [command, path])
            #expect(run.status == 1, "rill \(command): \(run.error)")
            #expect(run.output.isEmpty, "rill \(command): \(run.output)")
            #expect(
                run.error.contains("no store at \(path): its creation was cut short before anything was saved"),
                "rill \(command): \(run.error)")
        }
        #expect(dataFile(path) == before)
    }

    @Test(arguments: Cut.allCases)
    func openingWithCreationFinishesTheStore(_ cut: Cut) throws {
        let path = try make(cut)
        do {
            let container = try ModelContainer(
                for: Counter.self, configurations: ModelConfiguration(url: URL(fileURLWithPath: path)))
            container.mainContext.insert(Counter(id: 1, value: 1))
            #expect(try container.mainContext.save() == 1)
        }
        let audit = try #require(try StoreAudit.ofStoreIfAny(in: path))
        #expect(audit.head == 1)
        #expect(audit.isGapless)
        #expect(audit.projectionsMatchReplay)
        #expect(audit.projected["Counter"]?.count == 1)
        let run = try runBuilt("rill", ["check", path])
        #expect(run.status == 0, "\(run.error)")
    }

    @Test(arguments: Cut.allCases)
    func creatingIfMissingFinishesTheStore(_ cut: Cut) throws {
        let path = try make(cut)
        let head = try Store.creatingIfMissing(directory: path, options: StoreOptions()) { try $0.head() }
        #expect(head == 0)
        let store = try Store(directory: path, options: StoreOptions(readOnly: true), create: false)
        #expect(try store.head() == 0)
        #expect(try store.entityNames().isEmpty)
    }

    @Test func storeIsCreatedInOneCommit() throws {
        let path = directory.path("store")
        let store = try Store(directory: path, options: StoreOptions(), create: true)
        #expect(store.environment.lastTransactionID == 1)
        #expect(try store.environment.databaseNames() == ["log", "meta"])
        #expect(try store.head() == 0)
    }

    @Test func environmentWithOtherDatabasesStaysNotAStore() throws {
        let path = directory.path("other")
        do {
            let environment = try Environment(directory: path)
            try environment.write { txn in
                let other = try txn.database(named: "other", create: true)!
                try txn.put([1], for: [1], in: other)
            }
        }
        let before = dataFile(path)
        for create in [false, true] {
            let error = #expect(throws: RillError.self) {
                _ = try Store(directory: path, options: StoreOptions(), create: create)
            }
            #expect(error?.code == .notAStore, "create \(create): \(String(describing: error))")
            #expect(error?.message == "\(path) holds an LMDB environment that is not a Rill store")
        }
        let run = try runBuilt("rill", ["stats", path])
        #expect(run.status == 1)
        #expect(run.error.contains("not a Rill store"), "\(run.error)")
        #expect(dataFile(path) == before)
    }

    /// The staging directories of creations stopped before they ended are removed by the next
    /// creation at the same path: not one a process still has open, nor one just made.
    @Test func abandonedStagingDirectoriesAreRemovedByTheNextCreation() throws {
        let store = directory.path("made")
        func staging(_ suffix: String, age: Double, held: Bool) throws -> (path: String, lock: Int32?) {
            let path = directory.path(".made.rill-new-" + suffix)
            try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: false)
            #expect(FileManager.default.createFile(atPath: path + "/lock.mdb", contents: Data()))
            var lock: Int32?
            if held {
                let fd = open(path + "/lock.mdb", O_RDONLY | O_CLOEXEC)
                #expect(flock(fd, LOCK_SH) == 0)
                lock = fd
            }
            let then = Date().addingTimeInterval(-age).timeIntervalSince1970
            var times = [
                timeval(tv_sec: Int(then), tv_usec: 0), timeval(tv_sec: Int(then), tv_usec: 0),
            ]
            #expect(utimes(path, &times) == 0)
            return (path, lock)
        }
        let abandoned = try staging("AAAAAA", age: 600, held: false)
        let inUse = try staging("BBBBBB", age: 600, held: true)
        defer { if let fd = inUse.lock { close(fd) } }
        let recent = try staging("CCCCCC", age: 0, held: false)
        let other = try staging("DDDDDDD", age: 600, held: false)

        try Store.creatingIfMissing(directory: store, options: StoreOptions()) { _ in }
        #expect(!FileManager.default.fileExists(atPath: abandoned.path))
        #expect(FileManager.default.fileExists(atPath: inUse.path))
        #expect(FileManager.default.fileExists(atPath: recent.path))
        #expect(FileManager.default.fileExists(atPath: other.path), "not a staging directory's name")
        #expect(FileManager.default.fileExists(atPath: store + "/data.mdb"))
    }
}
