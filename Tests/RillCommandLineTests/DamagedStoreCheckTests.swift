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
