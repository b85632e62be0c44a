import Foundation
import RillTestSupport
import Testing

@testable import Rill

/// A store the process may not write — on a read-only mount, or without write permission — can
/// still be queried, exported, watched and fetched by a container that does not allow saving.
///
/// The tests run as root, and root ignores permission bits, so each case runs the commands in
/// a shell that makes the store read-only for them: a read-only bind mount in a private mount
/// namespace (nothing outlives the shell), or `setpriv` to the user nobody. Where the machine
/// does not allow that, the test is cancelled with the reason.
@Suite struct ReadOnlyStoreTests {
    let directory = TemporaryDirectory()

    /// A closed store of five Counters, readable (not writable) by everyone.
    func makeStore() throws -> String {
        let path = directory.path("store")
        do {
            let container = try ModelContainer(
                for: Counter.self, configurations: ModelConfiguration(url: URL(fileURLWithPath: path)))
            let context = ModelContext(container)
            for id in 1...5 { context.insert(Counter(id: id, value: id * 10)) }
            try context.save()
        }
        chmod(directory.url.path, 0o755)
        chmod(path, 0o755)
        chmod(path + "/data.mdb", 0o644)
        chmod(path + "/lock.mdb", 0o644)
        return path
    }

    /// The reading commands, the read-only container, and one write, as a script whose `$R`
    /// runs a program the way the case asks; each prints `<<name status>>` after its output.
    func commands(store: String) -> String {
        let products = buildProductsDirectory.path
        let insert = #"{"id":9,"value":1,"payload":""}"#
        return """
            S='\(store)'
            run() { name=$1; shift; "$@" 2>&1; echo "<<$name $?>>"; }
            run stats $R '\(products)/rill' stats "$S"
            run query $R '\(products)/rill' query "$S" 'Counter where value > 20'
            run get $R '\(products)/rill' get "$S" Counter 3
            run export $R '\(products)/rill' export "$S"
            run log $R '\(products)/rill' log "$S"
            run check $R '\(products)/rill' check "$S"
            run watch timeout -s INT 3 $R '\(products)/rill' watch "$S" 'Counter where value > 40'
            run container $R '\(products)/rill-test-helper' read-only "$S"
            run insert $R '\(products)/rill' insert "$S" Counter '\(insert)'
            """
    }

    /// Runs `script` with `sh`, under `launcher` (for example `unshare`); returns each command's
    /// output and status by name.
    func run(_ script: String, launcher: [String]) throws -> [String: (output: String, status: Int)] {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: launcher.isEmpty ? "/bin/sh" : launcher[0])
        process.arguments = Array(launcher.dropFirst()) + (launcher.isEmpty ? [] : ["sh"]) + ["-c", script]
        let pipe = Pipe()
        process.standardOutput = pipe
        process.standardError = pipe
        do {
            try process.run()
        } catch {
            try Test.cancel("cannot run \(launcher.first ?? "sh"): \(error)")
        }
        let text = String(decoding: pipe.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        process.waitUntilExit()
        if let skip = text.split(separator: "\n").first(where: { $0.hasPrefix("skip:") }) {
            try Test.cancel("\(skip)")
        }
        var results: [String: (output: String, status: Int)] = [:]
        var output = ""
        for line in text.split(separator: "\n", omittingEmptySubsequences: false) {
            if line.hasPrefix("<<"), line.hasSuffix(">>") {
                let parts = line.dropFirst(2).dropLast(2).split(separator: " ")
                results[String(parts[0])] = (output, Int(parts[1]) ?? -1)
                output = ""
            } else {
                output += line + "\n"
            }
        }
        return results
    }

    /// What every case expects: reads succeed with the store's data, the write fails clearly.
    func expectReadable(_ results: [String: (output: String, status: Int)], store: String) {
        for name in ["stats", "query", "get", "export", "log", "check", "container"] {
            #expect(results[name]?.status == 0, "\(name): \(results[name]?.output ?? "did not run")")
        }
        #expect(results["stats"]?.output.contains("log head:  1") == true, "\(results["stats"]?.output ?? "")")
        let rows = results["query"]?.output.split(separator: "\n").filter { $0.first?.isNumber == true }
        #expect(rows?.map { $0.split(separator: " ").first } == ["3", "4", "5"], "\(results["query"]?.output ?? "")")
        #expect(results["get"]?.output.contains("30") == true)
        #expect(results["export"]?.output.components(separatedBy: "\"op\":\"insert\"").count == 6)
        #expect(results["check"]?.output.contains("ok") == true)
        #expect(results["container"]?.output.hasPrefix("count 5 live 5\nerror readOnly") == true)
        // Watch prints the results, then waits until the bound ends it.
        #expect(results["watch"]?.output.contains("50") == true, "\(results["watch"]?.output ?? "")")
        #expect(results["insert"]?.status == 1)
        #expect(results["insert"]?.output.contains(store) == true, "\(results["insert"]?.output ?? "")")
    }

    @Test func storeOnAReadOnlyMountCanBeRead() throws {
        let store = try makeStore()
        let script =
            """
            mount --bind "\(store)" "\(store)" && mount -o remount,bind,ro "\(store)" \
                || { echo "skip: a read-only bind mount needs root or user namespaces"; exit 0; }
            R=
            """ + "\n" + commands(store: store)
        let results = try run(script, launcher: ["/usr/bin/unshare", "--mount", "--propagation", "private"])
        expectReadable(results, store: store)
        #expect(results["insert"]?.output.contains("read-only") == true, "\(results["insert"]?.output ?? "")")
    }

    @Test func storeWithoutWritePermissionCanBeReadWhenItsLockFileIsWritable() throws {
        let store = try makeStore()
        chmod(store + "/lock.mdb", 0o666)
        let script =
            """
            command -v setpriv > /dev/null || { echo "skip: needs setpriv to run as nobody"; exit 0; }
            R='setpriv --reuid=65534 --regid=65534 --clear-groups'
            """ + "\n" + commands(store: store)
        let results = try run(script, launcher: [])
        expectReadable(results, store: store)
    }

    @Test func storeWhoseLockFileCannotBeWrittenIsRefusedNamingIt() throws {
        let store = try makeStore()
        let script =
            """
            command -v setpriv > /dev/null || { echo "skip: needs setpriv to run as nobody"; exit 0; }
            R='setpriv --reuid=65534 --regid=65534 --clear-groups'
            """ + "\n" + commands(store: store)
        let results = try run(script, launcher: [])
        // Without a slot in the lock file a reader is invisible to writers, which may then
        // overwrite the pages it reads: refused, saying so.
        for name in ["stats", "query", "export"] {
            #expect(results[name]?.status == 1, "\(name)")
            #expect(results[name]?.output.contains(store + "/lock.mdb") == true, "\(results[name]?.output ?? "")")
        }
    }
}
