import Foundation
import RillTestSupport
import Testing

@testable import Rill
@testable import RillCommandLine

/// `rill watch` in a pseudo-terminal (tmux): the full screen, redrawn in place, against the
/// screen that the store's fresh results give — each commit's change worked out from the results
/// before and after it, not from the watch — through saves made by `rill insert`, `update` and
/// `delete`, resizes, paging keys, a stop and a continue, and the terminal as it was at the end.
/// Skipped, saying so, when tmux is not installed.
@Suite struct WatchTerminalTests {
    let directory = TemporaryDirectory()
    static let query = "Counter sort by value"

    /// The screen expected of the watch: its model, fed with the store's fresh results.
    struct Expected {
        var screen: WatchScreen
        var rows: [QueryRow] = []

        init(width: Int, height: Int, connection: String? = nil) {
            screen = WatchScreen(query: WatchTerminalTests.query, width: width, height: height)
            screen.connection = connection
        }

        mutating func results(_ rows: [QueryRow], sequence: UInt64) {
            self.rows = rows
            screen.show(rows, sequence: sequence)
        }

        /// The commit `sequence` made the results `new`.
        mutating func commit(_ sequence: UInt64, _ new: [QueryRow]) {
            let changed = Set(
                new.filter { row in rows.contains { $0.key == row.key && $0.record != row.record } }.map(\.key))
            screen.apply(
                ResultsDiff.between(
                    old: rows.map(\.key), oldModels: rows, new: new.map(\.key), newModels: new, changed: changed,
                    sequence: sequence))
            rows = new
        }

        /// The frame, as the pane shows it; the removed rows are in this one only.
        mutating func frame() -> [String] {
            let lines = screen.lines()
            screen.dropRemoved()
            return lines
        }
    }

    /// The query's results now, from `rill query --json`, keyed by their ids.
    func fresh(_ store: String) throws -> [QueryRow] {
        let run = try runBuilt("rill", ["query", store, Self.query, "--json"])
        #expect(run.status == 0, "\(run.error)")
        return try run.output.split(separator: "\n").map { line in
            let record = try JSONReader.parse(Array(line.utf8))
            guard case .map(let fields) = record, let id = fields.first(where: { $0.name == "id" })?.value else {
                throw TmuxSession.Unavailable(description: "a result without an id: \(line)")
            }
            return QueryRow(key: Array(id.jsonString().utf8), record: record)
        }
    }

    /// A save by `rill <operation>`: the commit it made.
    func save(_ store: String, _ operation: String, _ arguments: String...) throws -> UInt64 {
        let run = try runBuilt("rill", [operation, store, "Counter"] + arguments)
        #expect(run.status == 0, "\(run.error)")
        return UInt64(run.output.filter(\.isNumber)) ?? 0
    }

    func makeStore(count: Int) throws -> (path: String, sequence: UInt64) {
        let path = directory.path("store")
        let container = try ModelContainer(
            for: Counter.self, configurations: ModelConfiguration(url: URL(fileURLWithPath: path)))
        for id in 0..<count { container.mainContext.insert(Counter(id: id, value: id * 10)) }
        return (path, try container.mainContext.save() ?? 0)
    }

    /// A tmux session running `arguments`, or nil after saying why the test skips.
    func session(_ test: String, _ arguments: [String], width: Int = 80, height: Int = 24) throws -> TmuxSession? {
        do {
            return try TmuxSession(arguments, width: width, height: height, directory: directory.path(""))
        } catch let unavailable as TmuxSession.Unavailable {
            print("\(test): skipped, tmux cannot run here: \(unavailable)")
            return nil
        }
    }

    var rill: String { buildProductsDirectory.appendingPathComponent("rill").path }

    /// A tmux session running `script` by `sh -c`, with `$0` the rill executable, `$1` the store,
    /// `$2` the query and `$3` the path for the terminal's modes, once it shows the store's first
    /// results (commit `first`), with the screen expected then; nil after saying why the test
    /// skips.
    func scriptSession(
        _ test: String, _ script: String, store path: String, modes: String, first: UInt64
    ) throws -> (session: TmuxSession, expected: Expected)? {
        guard let session = try session(test, ["sh", "-c", script, rill, path, Self.query, modes]) else { return nil }
        do {
            var expected = Expected(width: 80, height: 24)
            expected.results(try fresh(path), sequence: first)
            expectScreen(session, expected.frame(), "the first results")
            return (session, expected)
        } catch {
            session.stop()
            throw error
        }
    }

    /// `rill arguments…` run by a shell that then prints its status ("watch ended: N") on the
    /// normal screen. The shell ignores SIGINT; the watch installs its own handler.
    func watch(_ arguments: [String]) -> [String] {
        ["sh", "-c", #"trap '' INT; "$0" "$@"; echo "watch ended: $?""#, rill] + arguments
    }

    /// Waits for the watch to end with status 0, the normal screen back.
    func expectEnded(_ session: TmuxSession, sourceLocation: SourceLocation = #_sourceLocation) {
        // The terminal echoes a Ctrl-C typed once the watch gave the modes back ("^C").
        let ended = session.wait { $0.contains { $0.hasSuffix("watch ended: 0") } }
        #expect(ended.held, "the watch ended with status 0: \(ended.screen)", sourceLocation: sourceLocation)
        #expect(session.format("#{alternate_on} #{cursor_flag}") == "0 1", sourceLocation: sourceLocation)
    }

    /// Waits for the pane to show `expected`; records the difference when it does not.
    func expectScreen(
        _ session: TmuxSession, _ expected: [String], _ step: String, sourceLocation: SourceLocation = #_sourceLocation
    ) {
        let (held, screen) = session.wait { $0 == expected }
        #expect(
            held,
            "\(step): the pane shows\n\(screen.joined(separator: "\n"))\nnot\n\(expected.joined(separator: "\n"))",
            sourceLocation: sourceLocation)
    }

    // MARK: - Tests

    @Test func aTerminalWatchRedrawsInPlaceThroughSavesResizesAndPages() throws {
        let (path, first) = try makeStore(count: 30)
        guard let session = try session(#function, watch(["watch", path, Self.query])) else { return }
        defer { session.stop() }
        var expected = Expected(width: 80, height: 24)
        expected.results(try fresh(path), sequence: first)
        expectScreen(session, expected.frame(), "the first results")
        #expect(session.format("#{alternate_on} #{cursor_flag}") == "1 0", "the alternate screen, no cursor")

        // Each save's change, marked: an insertion, an update, a move, a removal.
        for (operation, argument) in [
            ("insert", #"{"id":100,"value":55,"payload":""}"#), ("update", #"{"id":3,"payload":"new"}"#),
            ("update", #"{"id":1,"value":75}"#), ("delete", "4"),
        ] {
            let sequence = try save(path, operation, argument)
            expected.commit(sequence, try fresh(path))
            let frame = expected.frame()
            expectScreen(session, frame, "after \(operation) \(argument)")
            let mark =
                switch operation {
                case "insert": "+ 100 "
                case "delete": "- 4 "
                default: argument.contains("payload") ? "~ 3 " : "> 1 "
                }
            #expect(frame.contains { $0.hasPrefix(mark) }, "\(frame)")
        }

        // Smaller, then wider than the table: it fits each (SIGWINCH).
        for (width, height) in [(60, 12), (30, 8), (100, 30)] {
            session.resize(width: width, height: height)
            expected.screen.resize(width: width, height: height)
            expectScreen(session, expected.frame(), "resized to \(width)×\(height)")
        }
        session.resize(width: 40, height: 10)
        expected.screen.resize(width: 40, height: 10)
        expectScreen(session, expected.frame(), "resized to 40×10")
        #expect(session.screen().allSatisfy { TerminalCells.width(of: $0) <= 40 })

        // Paging keys.
        let keys: [(String, (inout WatchScreen) -> Void)] = [
            ("Space", { $0.nextPage() }), ("j", { $0.nextPage() }),
            ("b", { $0.previousPage() }), ("G", { $0.lastPage() }), ("k", { $0.previousPage() }),
            ("Home", { $0.firstPage() }), ("NPage", { $0.nextPage() }), ("End", { $0.lastPage() }),
            ("PPage", { $0.previousPage() }), ("g", { $0.firstPage() }), ("Down", { $0.lineDown() }),
        ]
        for (key, move) in keys {
            session.send(key)
            move(&expected.screen)
            expectScreen(session, expected.frame(), "after \(key)")
        }
        // A save while on a later page keeps the page.
        session.send("G")
        expected.screen.lastPage()
        expectScreen(session, expected.frame(), "the last page")
        let sequence = try save(path, "insert", #"{"id":200,"value":1000,"payload":"last"}"#)
        expected.commit(sequence, try fresh(path))
        expectScreen(session, expected.frame(), "a row inserted on the last page")

        session.send("q")
        expectEnded(session)
        #expect(!session.screen().contains { $0.contains(Self.query) }, "\(session.screen())")
    }

    /// q, Ctrl-C (SIGINT) and SIGTERM each end the watch with status 0 and leave the terminal as
    /// it was: the normal screen (what the shell printed before it is still there), the modes.
    @Test(arguments: ["q", "C-c", "TERM"]) func endingAWatchLeavesTheTerminalAsItWas(ending: String) throws {
        let (path, first) = try makeStore(count: 5)
        let modes = directory.path("modes")
        // The shell ignores SIGINT (the watch does not: it installs its own handler); the watch
        // runs in the background (for its pid) with the terminal as its input.
        let script = """
            trap '' INT; stty -a > "$3.before"; echo before the watch
            "$0" watch "$1" "$2" < /dev/tty & pid=$!; echo $pid > "$3.pid"
            wait $pid; echo "watch ended: $?"; stty -a > "$3"
            """
        guard let started = try scriptSession(#function, script, store: path, modes: modes, first: first) else {
            return
        }
        let session = started.session
        defer { session.stop() }
        switch ending {
        case "TERM":
            let pid = try String(contentsOfFile: modes + ".pid", encoding: .utf8)
            kill(pid_t(pid.trimmingCharacters(in: .whitespacesAndNewlines))!, SIGTERM)
        default:
            session.send(ending)
        }
        let (ended, screen) = session.wait { $0.contains("watch ended: 0") }
        #expect(ended, "\(ending): \(screen)")
        #expect(screen.first == "before the watch", "the normal screen is back: \(screen)")
        #expect(!screen.contains { $0.contains(Self.query) })
        #expect(session.format("#{alternate_on} #{cursor_flag}") == "0 1")
        #expect(session.wait(for: "#{pane_dead}", toBe: "1"))
        let before = try String(contentsOfFile: modes + ".before", encoding: .utf8)
        let after = try String(contentsOfFile: modes, encoding: .utf8)
        #expect(after == before, "the terminal's modes are as they were")
        #expect(after.contains(" icanon") && after.contains(" echo "))
    }

    /// Ctrl-Z (SIGTSTP) leaves the screen and the modes as they were before the watch stops;
    /// `fg` (SIGCONT) enters the screen again and redraws it, with the saves made meanwhile.
    @Test func aStoppedWatchLeavesTheScreenAndRedrawsWhenContinued() throws {
        let (path, first) = try makeStore(count: 5)
        let modes = directory.path("modes")
        // A shell with job control, as in a terminal: the watch is its foreground job.
        let script = """
            set -m; stty -a > "$3.before"; "$0" watch "$1" "$2"; echo "stopped: $?"; stty -a > "$3"
            read line; fg; echo "watch ended: $?"
            """
        guard let started = try scriptSession(#function, script, store: path, modes: modes, first: first) else {
            return
        }
        let session = started.session
        var expected = started.expected
        defer { session.stop() }
        session.send("C-z")
        let (stopped, screen) = session.wait { $0.contains { $0.contains("stopped: 148") } }
        #expect(stopped, "\(screen)")
        #expect(session.format("#{alternate_on} #{cursor_flag}") == "0 1", "stopped: the normal screen")
        #expect(
            try String(contentsOfFile: modes, encoding: .utf8)
                == String(contentsOfFile: modes + ".before", encoding: .utf8), "stopped: the modes as they were")
        let sequence = try save(path, "insert", #"{"id":9,"value":1,"payload":"meanwhile"}"#)
        session.send("Enter")
        expected.commit(sequence, try fresh(path))
        expectScreen(session, expected.frame(), "continued")
        #expect(session.format("#{alternate_on} #{cursor_flag}") == "1 0")
        session.send("C-c")
        let ended = session.wait { $0.contains("watch ended: 0") }
        #expect(ended.held, "Ctrl-C ends it with status 0: \(ended.screen)")
    }

    /// `--json` on a terminal is the same NDJSON as through a pipe, appended.
    @Test func aJSONWatchOnATerminalIsAppended() throws {
        let (path, first) = try makeStore(count: 2)
        guard let session = try session(#function, watch(["watch", "--json", path, Self.query]), width: 200) else {
            return
        }
        defer { session.stop() }
        let line = #"{"seq":\#(first),"results":["#
        let results = session.wait { $0.first?.hasPrefix(line) == true }
        #expect(results.held, "\(results.screen)")
        let sequence = try save(path, "delete", "0")
        let change = session.wait { $0.count > 1 && $0[1].hasPrefix(#"{"seq":\#(sequence),"removals":"#) }
        #expect(change.held, "\(change.screen)")
        #expect(session.format("#{alternate_on}") == "0")
        session.send("C-c")
        expectEnded(session)
    }

    /// `--connect` draws the same screen, from the daemon's stream, and says it is connected.
    @Test func aConnectedWatchDrawsTheSameScreen() throws {
        let (path, first) = try makeStore(count: 8)
        let daemon = try DaemonProcess(store: path, log: directory.path("serve.log"))
        guard let session = try session(#function, watch(["watch", "--connect", path, Self.query])) else {
            _ = daemon.stop()
            return
        }
        defer { session.stop() }
        var expected = Expected(width: 80, height: 24, connection: "connected")
        expected.results(try fresh(path), sequence: first)
        expectScreen(session, expected.frame(), "the first results")
        for (operation, argument) in [("update", #"{"id":2,"payload":"x"}"#), ("delete", "5")] {
            let sequence = try save(path, operation, argument)
            expected.commit(sequence, try fresh(path))
            expectScreen(session, expected.frame(), "after \(operation) \(argument)")
        }
        session.send("q")
        expectEnded(session)
        #expect(daemon.stop() == 0)
    }
}
