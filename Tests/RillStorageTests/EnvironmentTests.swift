import Foundation
import Testing

@testable import RillStorage

@Suite struct EnvironmentTests: StorageTestSuite {
    let directory = URL(fileURLWithPath: NSTemporaryDirectory()).appendingPathComponent("rill-storage-\(UUID())")

    @Test func createsDirectoryWithOwnerOnlyPermissions() throws {
        defer { try? FileManager.default.removeItem(at: directory) }
        _ = try open()
        let attributes = try FileManager.default.attributesOfItem(atPath: directory.path)
        #expect((attributes[.posixPermissions] as? Int) == 0o700)
    }

    @Test func twoHandlesShareOneEnvironment() throws {
        defer { try? FileManager.default.removeItem(at: directory) }
        let first = try open()
        let second = try Environment(directory: directory.path + "/./", options: EnvironmentOptions())
        let database = try first.database(named: "things", create: true)!
        try first.write { try $0.put([1], for: [1], in: database) }
        // The second handle sees the first one's database handle and data: one MDB_env.
        #expect(try second.database(named: "things", create: false) == database)
        #expect(try second.read { try $0.get([1], in: database).map(Array.init) } == [1])
    }

    @Test func keysOutsideOneTo511BytesAreRefusedBeforeLMDB() throws {
        defer { try? FileManager.default.removeItem(at: directory) }
        let environment = try open()
        let database = try environment.database(named: "things", create: true)!
        for size in [0, environment.maxKeySize + 1, 4096] {
            let error = #expect(throws: LMDBError.self) {
                try environment.write { try $0.put([1], for: [UInt8](repeating: 7, count: size), in: database) }
            }
            #expect(error?.code == LMDBError.badValueSize.code)
        }
        try environment.write {
            try $0.put([1], for: [UInt8](repeating: 7, count: environment.maxKeySize), in: database)
        }
    }

    @Test func fullMapGrowsAndTheWholeTransactionIsReplayed() throws {
        defer { try? FileManager.default.removeItem(at: directory) }
        let environment = try open(mapSize: 1 << 16)
        let database = try environment.database(named: "things", create: true)!
        let before = environment.mapSize
        var runs = 0
        try environment.write { txn in
            runs += 1
            for index in 0..<2_000 {
                let key = withUnsafeBytes(of: UInt32(index).bigEndian) { Array($0) }
                try txn.put([UInt8](repeating: UInt8(index % 251), count: 1_000), for: key, in: database)
            }
        }
        #expect(runs > 1, "the transaction was replayed after growing")
        #expect(environment.mapSize > before)
        #expect(try environment.read { try $0.count(of: database) } == 2_000)
    }

    @Test func failedTransactionWritesNothing() throws {
        defer { try? FileManager.default.removeItem(at: directory) }
        struct Stop: Error {}
        let environment = try open()
        let database = try environment.database(named: "things", create: true)!
        #expect(throws: Stop.self) {
            try environment.write { txn in
                try txn.put([1], for: [1], in: database)
                throw Stop()
            }
        }
        #expect(try environment.read { try $0.count(of: database) } == 0)
    }

    @Test func aDatabaseCreatedInAFailedTransactionIsNotLeftBehind() throws {
        defer { try? FileManager.default.removeItem(at: directory) }
        struct Stop: Error {}
        let environment = try open(mapSize: 1 << 16)
        #expect(throws: Stop.self) {
            try environment.write { txn in
                let database = try #require(try txn.database(named: "things", create: true))
                try txn.put([1], for: [1], in: database)
                throw Stop()
            }
        }
        #expect(try environment.databaseNames().isEmpty)
        #expect(try environment.database(named: "things", create: false) == nil)

        // Created in a transaction that commits (after the map grew and the closure ran again), the database and
        // its handle are the environment's.
        var runs = 0
        let created = try environment.write { txn -> Database in
            runs += 1
            let database = try #require(try txn.database(named: "things", create: true))
            for key in 0..<2_000 {
                try txn.put(
                    [UInt8](repeating: 1, count: 100), for: withUnsafeBytes(of: key.bigEndian) { Array($0) },
                    in: database)
            }
            return database
        }
        #expect(runs > 1, "the map grew and the transaction was replayed")
        let names = try environment.databaseNames()
        #expect(names == ["things"], "\(names.map { Array($0.utf8) })")
        #expect(try environment.database(named: "things", create: false) == created)
        #expect(try environment.read { try $0.count(of: created) } == 2_000)
    }

    @Test func cursorWalksKeysInOrder() throws {
        defer { try? FileManager.default.removeItem(at: directory) }
        let environment = try open()
        let database = try environment.database(named: "things", create: true)!
        try environment.write { txn in
            for key: UInt8 in [5, 1, 9, 3] { try txn.put([key], for: [key], in: database) }
        }
        let keys: [UInt8] = try environment.read { txn in
            try txn.withCursor(database) { cursor in
                var keys: [UInt8] = []
                var entry = try cursor.seek(atOrAfter: [2])
                while let current = entry {
                    keys.append(current.key[0])
                    entry = try cursor.next()
                }
                return keys
            }
        }
        #expect(keys == [3, 5, 9])
    }

    @Test func plainFileIsNotADirectory() throws {
        defer { try? FileManager.default.removeItem(at: directory) }
        _ = FileManager.default.createFile(atPath: directory.path, contents: Data("x".utf8))
        let error = #expect(throws: LMDBError.self) { try open() }
        #expect(error?.code == ENOTDIR)
    }
}
