import Foundation
import RillStorage
import RillTestSupport
import RillWorkloads
import Testing

@testable import Rill

@Suite struct BadInputTests {
    let directory = TemporaryDirectory()

    func open(_ path: String) throws -> ModelContainer {
        try ModelContainer(for: Book.self, configurations: ModelConfiguration(url: URL(fileURLWithPath: path)))
    }

    @Test func tooManyEntitiesAndIndexesIsAClearError() throws {
        let store = try Store(directory: directory.path("store"), options: StoreOptions(), create: true)
        var registered = 0
        do {
            for index in 0..<1_000 {
                _ = try store.registerEntity(named: "Entity\(index)", identifierKind: .integer)
                registered += 1
            }
            Issue.record("1,000 entities registered")
        } catch let error as RillError {
            #expect(error.code == .storage)
            #expect(error.message.contains("at most 254 entities and indexes"), "\(error.message)")
        }
        #expect(registered == 254)
        // The store goes on working with what it has.
        #expect(try store.entityNames().count == 254)
    }

    @Test func plainFileIsNotAStore() throws {
        let path = directory.path("file")
        let contents = Data("not a store".utf8)
        _ = FileManager.default.createFile(atPath: path, contents: contents)
        let error = #expect(throws: RillError.self) { try open(path) }
        #expect(error?.code == .notAStore)
        #expect(error?.message.contains(path) == true)
        #expect(FileManager.default.contents(atPath: path) == contents)
    }

    @Test func storeOfANewerFormatIsRefusedUntouched() throws {
        let path = directory.path("store")
        do {
            let container = try open(path)
            container.mainContext.insert(Book(title: "Kept", author: "A"))
            try container.mainContext.save()
            try container.store.withWriteTransaction { txn in
                try txn.put([0, 0, 0, 99], for: Array("format".utf8), in: container.store.meta)
            }
        }
        let before = FileManager.default.contents(atPath: path + "/data.mdb")
        let error = #expect(throws: RillError.self) { try open(path) }
        #expect(error?.code == .unsupportedFormat)
        #expect(error?.message.contains("99") == true)
        #expect(FileManager.default.contents(atPath: path + "/data.mdb") == before)
    }

    @Test func directoryWithoutWritePermissionIsRefusedAndLeftEmpty() throws {
        let path = directory.path("locked")
        try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: false)
        if getuid() == 0 {
            // Root writes anywhere; ask an unprivileged process to try.
            chmod(directory.url.path, 0o755)
            chmod(path, 0o755)
            let process = Process()
            process.executableURL = buildProductsDirectory.appendingPathComponent("rill-test-helper")
            process.arguments = ["open-as-nobody", path]
            let pipe = Pipe()
            process.standardOutput = pipe
            try process.run()
            process.waitUntilExit()
            let output = String(decoding: pipe.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
            #expect(output.hasPrefix("error permissionDenied"), "\(output)")
        } else {
            chmod(path, 0o555)
            defer { chmod(path, 0o755) }
            let error = #expect(throws: RillError.self) { try open(path) }
            #expect(error?.code == .permissionDenied)
        }
        #expect(try FileManager.default.contentsOfDirectory(atPath: path).isEmpty)
    }

    @Test func readOnlyContainerNeverCreatesAStore() throws {
        let path = directory.path("missing")
        let error = #expect(throws: RillError.self) {
            try ModelContainer(
                for: Book.self, configurations: ModelConfiguration(url: URL(fileURLWithPath: path), allowsSave: false))
        }
        #expect(error?.code == .storeNotFound)
        #expect(!FileManager.default.fileExists(atPath: path))
    }

    @Test func entityStoredWithAnotherIdentifierKindIsRefused() throws {
        struct Renamed: PersistentModel {
            static let entityName = "Book"
            var id: Int
        }
        let path = directory.path("store")
        _ = try open(path)
        let error = #expect(throws: RillError.self) {
            try ModelContainer(for: Renamed.self, configurations: ModelConfiguration(url: URL(fileURLWithPath: path)))
        }
        #expect(error?.code == .invalidConfiguration)
    }

    @Test func aModelWhoseIdentifierIsNoneOfTheFourIsRefused() throws {
        struct Version: ModelIdentifier {
            var number: Int
            var description: String { "v\(number)" }
        }
        struct Release: PersistentModel {
            var id: Version
        }
        let url = URL(fileURLWithPath: directory.path("store"))
        let error = #expect(throws: RillError.self) {
            try ModelContainer(for: Release.self, configurations: ModelConfiguration(url: url))
        }
        #expect(error?.code == .invalidConfiguration)
        #expect(error?.message.contains("Release's id is Version") == true, "\(String(describing: error))")
    }
}
