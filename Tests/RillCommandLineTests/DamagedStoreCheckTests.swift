import Foundation
import RillTestSupport
import Testing

/// `rill check` of a file damaged badly enough to stop LMDB itself: a report of the damage and
/// exit status 1, not a crash of rill.
@Suite struct DamagedStoreCheckTests {
    let directory = TemporaryDirectory()

    func rill(_ arguments: [String], input: String? = nil) throws -> ProcessRun {
        try runBuilt("rill", arguments, input: input)
    }

    @Test func aLeafPageMarkedAsABranchIsReportedNotACrash() throws {
        let path = directory.path("store")
        let description = #"{"entity":"Book","identifier":"Int","indexes":["author"]}"#
        let books = (1...3_000).map {
            #"{"op":"insert","entity":"Book","record":{"id":\#($0),"title":"T\#($0) of some length","author":"A\#($0 % 7)"}}"#
        }
        let imported = try rill(["import", path], input: ([description] + books).joined(separator: "\n"))
        #expect(imported.status == 0, "\(imported.error)")
        let healthy = try rill(["check", path])
        #expect(healthy.status == 0 && healthy.output.contains("ok:"), "\(healthy.output)\(healthy.error)")

        // A leaf page in the middle of the file, its flags turned from leaf (2) to branch (1):
        // LMDB follows a sibling link onto it and fails its assertion IS_LEAF.
        let file = URL(fileURLWithPath: path + "/data.mdb")
        var bytes = [UInt8](try Data(contentsOf: file))
        let pageSize = 4096
        func field<T: FixedWidthInteger>(_ type: T.Type, at offset: Int) -> T {
            bytes[offset..<(offset + MemoryLayout<T>.size)].reversed().reduce(T.zero) { $0 << 8 | T($1) }
        }
        let leaves = (2..<(bytes.count / pageSize)).filter { page in
            field(UInt64.self, at: page * pageSize) == UInt64(page) && field(UInt16.self, at: page * pageSize + 10) == 2
        }
        try #require(leaves.count > 10, "a file of \(bytes.count / pageSize) pages has \(leaves.count) leaf pages")
        bytes[leaves[leaves.count / 2] * pageSize + 10] = 1
        try Data(bytes).write(to: file)

        for arguments in [["check", path], ["check", "--json", path]] {
            let damaged = try rill(arguments)
            #expect(damaged.status == 1, "\(arguments): \(damaged.status) \(damaged.output)\(damaged.error)")
            #expect(damaged.output.contains("the store's file is damaged"), "\(damaged.output)\(damaged.error)")
        }
        let json = try rill(["check", "--json", path])
        #expect(json.output.hasPrefix(#"{"healthy":false,"problems":["#), "\(json.output)")
    }
}
