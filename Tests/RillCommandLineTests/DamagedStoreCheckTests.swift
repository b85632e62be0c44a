import Foundation
import RillTestSupport
import Testing

/// `rill check` of a file damaged badly enough to stop LMDB itself: a report of the damage and
/// exit status 1, not a crash of rill. With `--json`, a store that cannot be opened at all is
/// reported on standard output too, for a monitor that parses it.
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

    /// A store of a few commits whose list of free pages has entries, its file's bytes, and the
    /// root page of that list.
    func storeWithFreePages(_ path: String) throws -> (bytes: [UInt8], root: Int) {
        let description = #"{"entity":"Book","identifier":"Int","indexes":["author"]}"#
        let books = (1...200).map {
            #"{"op":"insert","entity":"Book","record":{"id":\#($0),"title":"T\#($0)","author":"A\#($0 % 7)"}}"#
        }
        #expect(try rill(["import", path], input: ([description] + books).joined(separator: "\n")).status == 0)
        // Commits that free pages, so that the list has entries.
        for id in 1...5 {
            let insert = try rill(["insert", path, "Book", #"{"id":\#(id),"title":"again","author":"B"}"#])
            #expect(insert.status == 0, "\(insert.error)")
        }
        #expect(try rill(["check", path]).status == 0)

        // The meta pages (0 and 1) each hold an MDB_meta after the 16-byte page header: the free
        // list's MDB_db first (its root page at 40 bytes in), the transaction id at 128.
        let bytes = [UInt8](try Data(contentsOf: URL(fileURLWithPath: path + "/data.mdb")))
        let meta = [0, Self.pageSize].max { Self.word(bytes, at: $0 + 16 + 128) < Self.word(bytes, at: $1 + 16 + 128) }!
        let root = Self.word(bytes, at: meta + 16 + 24 + 40)
        try #require(root != UInt64.max && root > 1, "the list of free pages has no root page: \(root)")
        return (bytes, Int(root))
    }

    static let pageSize = 4096

    /// The little-endian UInt64 at `offset`.
    static func word(_ bytes: [UInt8], at offset: Int) -> UInt64 {
        bytes[offset..<(offset + 8)].reversed().reduce(UInt64.zero) { $0 << 8 | UInt64($1) }
    }

    /// The root page of LMDB's free-page list zeroed: every read of the records succeeds, every
    /// write fails, and only a walk of the list finds it.
    @Test func anUnreadableListOfFreePagesIsReported() throws {
        let path = directory.path("store")
        var (bytes, root) = try storeWithFreePages(path)
        let start = root * Self.pageSize
        bytes.replaceSubrange(start..<(start + Self.pageSize), with: repeatElement(0, count: Self.pageSize))
        try Data(bytes).write(to: URL(fileURLWithPath: path + "/data.mdb"))

        let write = try rill(["insert", path, "Book", #"{"id":999,"title":"x","author":"y"}"#])
        #expect(write.status == 1, "the damage stops writes: \(write.output)")
        #expect(try rill(["get", path, "Book", "7"]).status == 0, "and not reads")
        let check = try rill(["check", path])
        #expect(check.status == 1, "\(check.output)\(check.error)")
        #expect(check.output.contains("problem: the store's list of free pages is damaged"), "\(check.output)")
        let json = try rill(["check", "--json", path])
        #expect(json.status == 1 && json.output.hasPrefix(#"{"healthy":false"#), "\(json.output)")
        #expect(json.output.contains("free pages"), "\(json.output)")
    }

    /// A page number in the list past the end of the file, which a write would take as a free page.
    @Test func aFreedPageOutsideTheFileIsReported() throws {
        let path = directory.path("store")
        var (bytes, root) = try storeWithFreePages(path)
        // The root's first node (a leaf: 2 = P_LEAF at byte 10): its offset is the first entry of the
        // page's pointer array, after the 16-byte header; the node's 8-byte header, then its key
        // (mn_ksize at 6), then its data: a count of page numbers and the numbers.
        let page = root * Self.pageSize
        try #require(bytes[page + 10] & 2 != 0, "the list's root is a leaf")
        let node = page + (Int(bytes[page + 16]) | Int(bytes[page + 17]) << 8)
        let keySize = Int(bytes[node + 6]) | Int(bytes[node + 7]) << 8
        let data = node + 8 + keySize
        try #require(Self.word(bytes, at: data) > 0, "the entry lists pages")
        bytes.replaceSubrange(
            (data + 8)..<(data + 16), with: withUnsafeBytes(of: UInt64(1 << 40).littleEndian, Array.init))
        try Data(bytes).write(to: URL(fileURLWithPath: path + "/data.mdb"))

        let check = try rill(["check", path])
        #expect(check.status == 1, "\(check.output)\(check.error)")
        #expect(check.output.contains("problem: the store's list of free pages is damaged"), "\(check.output)")
        #expect(check.output.contains("freed page \(1 << 40), which is not a page of the file"), "\(check.output)")
    }

    @Test func aStoreThatCannotBeOpenedIsReportedAsJSON() throws {
        let path = directory.path("store")
        let changes = [#"{"entity":"Book","identifier":"Int"}"#, #"{"op":"insert","entity":"Book","record":{"id":1}}"#]
        let imported = try rill(["import", path], input: changes.joined(separator: "\n") + "\n")
        #expect(imported.status == 0, "\(imported.error)")
        let file = path + "/data.mdb"
        let whole = try Data(contentsOf: URL(fileURLWithPath: file))
        let cases: [(String, () throws -> Void)] = [
            ("cut short", { try whole.prefix(4096).write(to: URL(fileURLWithPath: file)) }),
            ("empty", { try Data().write(to: URL(fileURLWithPath: file)) }),
            ("garbage", { try Data(repeating: 0xA5, count: whole.count).write(to: URL(fileURLWithPath: file)) }),
            ("missing", { try FileManager.default.removeItem(atPath: path) }),
        ]
        for (name, damage) in cases {
            try damage()
            let run = try rill(["check", "--json", path])
            #expect(run.status == 1, "\(name): \(run.status) \(run.output)\(run.error)")
            let lines = run.output.split(separator: "\n")
            #expect(lines.count == 1, "\(name): \(run.output)")
            let report = try JSONSerialization.jsonObject(with: Data(run.output.utf8)) as? [String: Any]
            #expect(report?["healthy"] as? Bool == false, "\(name): \(run.output)")
            let problems = report?["problems"] as? [String] ?? []
            #expect(problems.count == 1 && problems[0].contains(path), "\(name): \(run.output)")
            // The message stays on standard error for a person.
            #expect(run.error.contains(problems.first ?? "?"), "\(name): \(run.error)")
            let text = try rill(["check", path])
            #expect(text.status == 1 && text.output.isEmpty, "\(name): \(text.output)")
        }
    }
}
