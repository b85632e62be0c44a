import Foundation
import Testing

/// The package's layering, checked on its sources: which of the package's modules the files of each directory
/// may import. The table is the one of `Documentation/Architecture.md` ("Modules"), refined inside `Rill`, where
/// only the store and the log may import `RillStorage`: the layers above them reach it through the façade.
///
/// The compiler holds the rest (`MemberImportVisibility`: a file sees the members of the modules it imports,
/// not of those its imports bring in), so a file can reach only what it imports, and this test keeps each
/// directory's imports to the ones it is allowed.
@Suite struct LayeringTests {
    /// The package's root: this file is `Tests/RillTests/LayeringTests.swift`.
    static let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent()

    /// The package's modules a file may import, by the directory that holds it. A file follows the longest
    /// directory of the table that holds it; a directory under `Sources/` or `Samples/` that none holds fails.
    static let allowed: [String: Set<String>] = [
        "Sources/RillLocks": [],
        "Sources/RillStorage": ["CLMDB", "RillLocks"],
        // The replicated log's transport: the NATS C client, nothing of Rill's.
        "Sources/NATSJetStream": ["CNATS"],
        "Sources/RillJetStream": ["Rill", "NATSJetStream", "RillLocks"],
        // The library's layers: records, models, queries and live queries know no storage (the
        // live queries' loads ask for memory ahead through `CPrefetch`).
        "Sources/Rill": ["RillLocks", "CPrefetch"],
        "Sources/Rill/Store": ["RillLocks", "RillStorage"],
        "Sources/Rill/Log": ["RillLocks", "RillStorage"],
        "Sources/RillService": ["Rill"],
        "Sources/RillHTTP": [],
        "Sources/RillServer": ["Rill", "RillHTTP", "RillLocks", "RillService"],
        "Sources/RillClient": ["RillHTTP", "RillService"],
        "Sources/RillCommandLine": [
            "Rill", "RillService", "RillHTTP", "RillLocks", "RillServer", "RillClient", "RillJetStream",
        ],
        "Sources/RillWorkloads": ["Rill"],
        // Its baseline is raw LMDB through the C API, beside Rill doing the same work.
        "Sources/rill-bench": [
            "Rill", "CLMDB", "CSQLite", "RillLocks", "RillWorkloads", "RillJetStream", "RillTorture",
        ],
        // The reliability suites drive the library, the daemon's protocol and its socket, and stores on a
        // replicated log.
        "Sources/RillTorture": ["Rill", "RillService", "RillHTTP", "RillJetStream", "RillLocks", "RillWorkloads"],
        "Sources/rill-torture": ["RillTorture"],
        "Sources/RillFuzzTargets": ["Rill", "RillHTTP", "RillLocks"],
        "Sources/rill-fuzz": ["RillFuzzTargets"],
        "Samples/Library": ["Rill"],
        "Samples/Settings": ["Rill"],
        "Samples/Tasks": ["Rill"],
        "Samples/Recipes": ["Rill"],
        "Tests/RillTestSupport": ["Rill", "RillWorkloads", "RillHTTP", "RillLocks"],
        "Tests/RillTestHelper": ["Rill", "RillLocks", "RillWorkloads", "RillTestSupport"],
    ]

    /// The modules of the package, by their directory: the names the table governs (any other import, such as
    /// `Foundation`, is the system's).
    static let modules: [String: String] = [
        "Sources/CLMDB": "CLMDB", "Sources/CSQLite": "CSQLite", "Sources/CPrefetch": "CPrefetch",
        "Sources/RillLocks": "RillLocks",
        "Sources/RillStorage": "RillStorage", "Sources/CNATS": "CNATS", "Sources/NATSJetStream": "NATSJetStream",
        "Sources/RillJetStream": "RillJetStream",
        "Sources/Rill": "Rill", "Sources/RillService": "RillService", "Sources/RillHTTP": "RillHTTP",
        "Sources/RillServer": "RillServer",
        "Sources/RillClient": "RillClient", "Sources/RillCommandLine": "RillCommandLine",
        "Sources/RillWorkloads": "RillWorkloads", "Sources/rill-bench": "rill-bench",
        "Sources/RillTorture": "RillTorture", "Sources/rill-torture": "rill-torture",
        "Sources/RillFuzzTargets": "RillFuzzTargets", "Sources/rill-fuzz": "rill-fuzz",
        "Samples/Library": "library-demo", "Samples/Settings": "settings-demo", "Samples/Tasks": "tasks-demo",
        "Samples/Recipes": "recipes-demo",
        "Tests/RillTestSupport": "RillTestSupport",
        "Tests/RillTestHelper": "rill-test-helper",
    ]

    @Test func everyFileImportsOnlyWhatItsDirectoryMay() throws {
        let names = Set(Self.modules.values)
        var checked = 0
        for file in try Self.swiftFiles(under: ["Sources", "Samples", "Tests/RillTestSupport", "Tests/RillTestHelper"])
        {
            guard let directory = Self.rule(for: file) else {
                Issue.record("\(file): no directory of LayeringTests.allowed holds it; give its module a rule")
                continue
            }
            let text = try String(contentsOf: Self.root.appendingPathComponent(file), encoding: .utf8)
            for module in Self.imports(in: text) where names.contains(module) {
                if !Self.allowed[directory, default: []].contains(module) {
                    let may = Self.allowed[directory, default: []].sorted().joined(separator: ", ")
                    Issue.record(
                        "\(file) imports \(module); \(directory) may import \(may.isEmpty ? "none of the package's modules" : may)"
                    )
                }
            }
            checked += 1
        }
        #expect(checked > 100)
    }

    /// The type's name, not written out whole here, so that this file does not name it.
    static let mutex = "Mut" + "ex"

    /// Shared state is behind `RillLocks.Lock`, never Synchronization's `Mutex` directly: on Linux a
    /// `Mutex` is built on futexes, which ThreadSanitizer cannot see, so `make tsan` would report
    /// every access under one as a race and real races would go unseen among them (Reliability.md,
    /// "Threads"). `Lock` is a pthread mutex in that build and the `Mutex` itself in every other.
    @Test func sharedStateIsBehindLockNotMutex() throws {
        var checked = 0
        for file in try Self.swiftFiles(under: ["Sources", "Samples", "Tests"])
        where !file.hasPrefix("Sources/RillLocks/") {
            let text = try String(contentsOf: Self.root.appendingPathComponent(file), encoding: .utf8)
            for (number, line) in text.split(separator: "\n", omittingEmptySubsequences: false).enumerated() {
                let code = line.trimmingCharacters(in: .whitespaces)
                guard !code.hasPrefix("//"), code.contains(Self.mutex) else { continue }
                // The type named as a word of its own (not `pthread_mutex_t`), then `<` or `(`.
                let words = code.split(whereSeparator: { !($0.isLetter || $0.isNumber || $0 == "_") })
                if words.contains(Substring(Self.mutex)),
                    code.contains(Self.mutex + "<") || code.contains(Self.mutex + "(")
                {
                    Issue.record("\(file):\(number + 1) uses Synchronization's Mutex; use RillLocks' Lock: \(code)")
                }
            }
            checked += 1
        }
        #expect(checked > 300)
    }

    /// The table above says what Architecture.md's says: a module's imports are the union of its directories'.
    @Test func theRulesAreTheArchitectureTable() throws {
        let documented = try Self.documentedImports()
        for (directory, module) in Self.modules where directory.hasPrefix("Sources/") || directory.hasPrefix("Samples/")
        {
            let ruled = Self.allowed.filter { $0.key == directory || $0.key.hasPrefix(directory + "/") }
                .reduce(into: Set<String>()) { $0.formUnion($1.value) }
            #expect(documented[module] == ruled, "Architecture.md lists \(module)'s imports otherwise")
        }
    }

    /// Every Swift file under `directories`, as a path from the package's root.
    static func swiftFiles(under directories: [String]) throws -> [String] {
        var files: [String] = []
        for directory in directories {
            let url = root.appendingPathComponent(directory)
            guard let walk = FileManager.default.enumerator(atPath: url.path) else {
                throw CocoaError(.fileNoSuchFile, userInfo: [NSFilePathErrorKey: url.path])
            }
            for case let path as String in walk where path.hasSuffix(".swift") {
                files.append(directory + "/" + path)
            }
        }
        return files.sorted()
    }

    /// The longest directory of the table that holds `file`.
    static func rule(for file: String) -> String? {
        allowed.keys.filter { file.hasPrefix($0 + "/") }.max { $0.count < $1.count }
    }

    /// The modules `text` imports: `import M`, `import struct M.T`, with attributes or an access level before.
    static func imports(in text: String) -> [String] {
        text.split(separator: "\n").compactMap { line in
            let words = line.split(separator: " ").filter { !$0.hasPrefix("@") }
            guard let at = words.firstIndex(of: "import"), at <= 1, at + 1 < words.count else { return nil }
            guard at == 0 || ["public", "package", "internal", "private", "fileprivate"].contains(words[0]) else {
                return nil
            }
            let kinds: Set<Substring> = ["struct", "class", "enum", "protocol", "typealias", "func", "var", "let"]
            let path = kinds.contains(words[at + 1]) && at + 2 < words.count ? words[at + 2] : words[at + 1]
            return String(path.split(separator: ".")[0])
        }
    }

    /// module → the package's modules it imports, from the table under "## Modules" in Architecture.md.
    static func documentedImports() throws -> [String: Set<String>] {
        let url = root.appendingPathComponent("Documentation/Architecture.md")
        let text = try String(contentsOf: url, encoding: .utf8)
        guard let start = text.range(of: "\n## Modules\n") else { throw CocoaError(.fileReadCorruptFile) }
        let section = text[start.upperBound...]
        var table: [String: Set<String>] = [:]
        for line in section.split(separator: "\n") {
            if line.hasPrefix("## ") { break }
            guard line.hasPrefix("| `") else { continue }
            let cells = line.split(separator: "|").map { $0.trimmingCharacters(in: .whitespaces) }
            guard let name = cells.first, let imports = cells.last else { continue }
            table[name.trimmingCharacters(in: ["`"])] = Set(
                imports.split(separator: ",").map { $0.trimmingCharacters(in: [" ", "`"]) }.filter { $0 != "—" })
        }
        return table
    }
}
