import Foundation
import RillTestSupport
import RillWorkloads
import Synchronization
import Testing

@testable import Rill

/// `rill watch` as a real process, on a store other processes write.
@Suite struct WatchCommandTests {
    let directory = TemporaryDirectory()

    /// The results after each change of an NDJSON watch (its first line the results), by commit;
    /// progress lines, which change nothing, left out.
    static func states(_ lines: [String]) -> [UInt64: [NSDictionary]] {
        var states: [UInt64: [NSDictionary]] = [:]
        var records = (ResultsLines.object(lines[0])["results"] as? [NSDictionary]) ?? []
        for line in lines.dropFirst() where !ResultsLines.isProgress(line) {
            records = ResultsLines.apply([line], to: records)
            states[ResultsLines.sequence(line)] = records
        }
        return states
    }

    func freshResults(_ store: String, _ query: String) throws -> [NSDictionary] {
        try runBuilt("rill", ["query", store, query, "--json"]).output.split(separator: "\n").map {
            ResultsLines.object(String($0)) as NSDictionary
        }
    }

    @Test func watchersReplayToTheFinalResultsAcrossAKillAndResume() throws {
        let path = directory.path("store")
        let container = try ModelContainer(
            for: Counter.self, configurations: ModelConfiguration(url: URL(fileURLWithPath: path)))
        let context = ModelContext(container)
        for id in 0..<20 { context.insert(Counter(id: id, value: id * 5)) }
        try context.save()
        let query = "Counter where value >= 30 sort by value desc limit 10"

        // Two watchers from the start: one killed midway and resumed, one to the end.
        let steady = try RillProcess(["watch", "--json", path, query])
        let killed = try RillProcess(["watch", path, query, "--json"])
        #expect(steady.wait { $0.count >= 1 })
        #expect(killed.wait { $0.count >= 1 })

        let writer = Process()
        writer.executableURL = buildProductsDirectory.appendingPathComponent("rill-test-helper")
        let seed = SeededGenerator(label: "watch writer").seed
        writer.arguments = ["random-saves", path, String(seed), "400"]
        writer.standardOutput = FileHandle.nullDevice
        try writer.run()

        // Kill one watcher mid-stream; resume it from the last commit it printed.
        #expect(killed.wait { $0.count >= 6 })
        _ = killed.stop(SIGKILL)
        let before = killed.output
        let resumed = try RillProcess([
            "watch", "--json", "--since", String(ResultsLines.sequence(before.last!)), path, query,
        ])

        // Saves through the library too, while the other process writes.
        for round in 0..<40 {
            context.insert(Counter(id: 100 + round % 7, value: round * 3))
            try context.save()
            usleep(2_000)
        }
        writer.waitUntilExit()
        #expect(writer.terminationStatus == 0)
        // A last save that surely changes the results: every watcher prints its sequence.
        context.insert(Counter(id: 999, value: 1_000_000))
        let head = try #require(try context.save())
        for watcher in [steady, resumed] {
            #expect(
                watcher.wait { $0.last.map(ResultsLines.sequence) == head }, "a watcher did not reach commit \(head)")
        }
        #expect(steady.stop(SIGINT) == 0, "Ctrl-C ends a watch with status 0")
        #expect(resumed.stop(SIGTERM) == 0)

        let final = try freshResults(path, query)
        #expect(final.count == 10)
        func initial(_ lines: [String]) -> [NSDictionary] {
            (ResultsLines.object(lines[0])["results"] as? [NSDictionary]) ?? []
        }
        let steadyLines = steady.output
        #expect(ResultsLines.apply(steadyLines.dropFirst(), to: initial(steadyLines)) == final)
        let across = before + resumed.output
        #expect(ResultsLines.apply(across.dropFirst(), to: initial(across)) == final)
        // Every move and update carries the record as it was, the resumed watcher's too.
        for lines in [steadyLines, across] {
            var mismatches: [String] = []
            _ = ResultsLines.apply(lines.dropFirst(), to: initial(lines), beforeMismatches: &mismatches)
            #expect(mismatches.isEmpty, "\(mismatches.prefix(3))")
            #expect(lines.contains { $0.contains(#""before":"#) })
        }
        // No change lost or repeated: changes at the same commits, to the same results after
        // each, as the steady watcher's (a resumed query may spell a change differently).
        let sequences = across.dropFirst().map(ResultsLines.sequence)
        #expect(sequences == sequences.sorted() && Set(sequences).count == sequences.count)
        #expect(Self.states(across) == Self.states(steadyLines))
    }

    @Test func terminalRenderingMarksRowsWithoutColorsOffATerminal() throws {
        let path = directory.path("store")
        let container = try ModelContainer(
            for: Counter.self, configurations: ModelConfiguration(url: URL(fileURLWithPath: path)))
        let context = ModelContext(container)
        for id in 0..<3 { context.insert(Counter(id: id, value: id)) }
        try context.save()
        let watcher = try RillProcess(["watch", path, "Counter sort by value"])
        #expect(watcher.wait { $0.contains("(3 records at commit 1)") })
        context.insert(Counter(id: 7, value: 1))
        context.insert(Counter(id: 0, value: 10))
        context.delete(Counter(id: 2, value: 2))
        try context.save()
        #expect(watcher.wait { $0.contains("(3 records)") })
        // In place: one field of one record.
        context.insert(Counter(id: 1, value: 1, payload: "new"))
        try context.save()
        #expect(watcher.wait { $0.filter { $0 == "(3 records)" }.count == 2 })
        #expect(watcher.stop(SIGINT) == 0)
        let text = watcher.output.joined(separator: "\n")
        #expect(text.contains("── commit 2: 1 inserted, 1 removed, 1 moved ──"), "\(text)")
        #expect(watcher.output.contains { $0.hasPrefix("+ 7 ") && !$0.contains("changed") })
        #expect(watcher.output.contains { $0.hasPrefix("- 2 ") })
        // Moved and updated rows name the fields that changed.
        #expect(watcher.output.contains { $0.hasPrefix("> 0 ") && $0.hasSuffix("  (changed: value)") }, "\(text)")
        #expect(text.contains("── commit 3: 1 updated ──"), "\(text)")
        #expect(watcher.output.contains { $0.hasPrefix("~ 1 ") && $0.hasSuffix("  (changed: payload)") }, "\(text)")
        #expect(!text.contains("\u{1B}["), "no colors when the output is not a terminal")
    }

    @Test func aResumedTableStartsFromTheResultsAtItsCommit() throws {
        let path = directory.path("store")
        let container = try ModelContainer(
            for: Counter.self, configurations: ModelConfiguration(url: URL(fileURLWithPath: path)))
        let context = ModelContext(container)
        for id in 0..<3 { context.insert(Counter(id: id, value: id)) }
        let first = try #require(try context.save())
        context.insert(Counter(id: 7, value: 1))
        try context.save()
        context.delete(Counter(id: 2, value: 2))
        try context.save()
        // Once the first commit's results are shown, each later change is applied to them.
        let watcher = try RillProcess(["watch", path, "Counter sort by value", "--since", String(first)])
        #expect(watcher.wait { $0.contains("(3 records at commit \(first))") })
        #expect(watcher.wait { $0.contains("(4 records)") && $0.contains("(3 records)") })
        #expect(watcher.process.isRunning, "the watch goes on")
        #expect(watcher.stop(SIGINT) == 0)
        let text = watcher.output.joined(separator: "\n")
        #expect(text.contains("── commit \(first + 1): 1 inserted ──"), "\(text)")
        #expect(text.contains("── commit \(first + 2): 1 removed ──"), "\(text)")
        #expect(watcher.output.contains { $0.hasPrefix("- 2 ") })
    }

    @Test func aLargeTableShowsTheChangedRowsOnly() throws {
        let path = directory.path("store")
        let container = try ModelContainer(
            for: Counter.self, configurations: ModelConfiguration(url: URL(fileURLWithPath: path)))
        let context = ModelContext(container)
        for id in 0..<500 { context.insert(Counter(id: id, value: id)) }
        try context.save()
        let watcher = try RillProcess(["watch", path, "Counter sort by value"])
        #expect(watcher.wait { $0.contains("(500 records at commit 1)") })
        let printed = watcher.output.count
        context.insert(Counter(id: 9, value: 1_000))
        try context.save()
        #expect(watcher.wait { $0.contains("(500 records)") })
        #expect(watcher.stop(SIGINT) == 0)
        let change = Array(watcher.output.dropFirst(printed))
        #expect(change.contains { $0.hasPrefix("> 9 ") }, "\(change)")
        #expect(change.contains("  (499 records unchanged not shown)"), "\(change)")
        #expect(change.count < 10, "only the changed row is shown: \(change)")
    }

    @Test func badWatchesFailClearly() throws {
        let path = directory.path("store")
        let container = try ModelContainer(
            for: Counter.self, configurations: ModelConfiguration(url: URL(fileURLWithPath: path)))
        container.mainContext.insert(Counter(id: 1, value: 1))
        try container.mainContext.save()
        for (arguments, status, message) in [
            (["watch", path, "Counter where"], Int32(64), "bad query"),
            (["watch", path, "Nothing"], 1, "no entity Nothing (it has: Counter)"),
            (["watch", path, "Counter", "--since", "99"], 1, "the log's last commit is 1"),
            (["watch", directory.path("none"), "Counter"], 1, "no store at"),
            (["watch", path], 64, "missing <query>"),
            (["watch", path, "Counter", "--connect", path], 64, "not both"),
            (["watch"], 64, "missing <store> and <query>"),
            (["watch", path, "Counter", "--progress", "1"], 64, "--progress is for --json"),
            (["watch", "--json", path, "Counter", "--progress", "-1"], 64, "--progress takes a number of seconds"),
        ] {
            let run = try runBuilt("rill", arguments)
            #expect(run.status == status, "\(arguments): \(run.error)")
            #expect(run.error.contains(message), "\(arguments): \(run.error)")
        }
    }

    /// Waits up to 30 s for `process` to end; kills it and returns nil when it does not.
    static func exitStatus(of process: Process) -> Int32? {
        let deadline = Date().addingTimeInterval(30)
        while process.isRunning, Date() < deadline { usleep(10_000) }
        guard !process.isRunning else {
            kill(process.processIdentifier, SIGKILL)
            process.waitUntilExit()
            return nil
        }
        return process.terminationStatus
    }

    /// A watch whose reader never reads blocks in its write; SIGINT and SIGTERM still end it.
    @Test(arguments: [SIGINT, SIGTERM]) func anInterruptEndsAWatchWhoseOutputIsBlocked(signal: Int32) throws {
        let path = directory.path("store")
        let container = try ModelContainer(
            for: Counter.self, configurations: ModelConfiguration(url: URL(fileURLWithPath: path)))
        for id in 0..<2_000 {
            container.mainContext.insert(Counter(id: id, value: id, payload: String(repeating: "x", count: 200)))
        }
        try container.mainContext.save()
        let daemon = try DaemonProcess(store: path, log: directory.path("serve.log"))
        for arguments in [
            ["watch", "--json", path, "Counter"], ["watch", path, "Counter"],
            ["watch", "--json", "--connect", path, "Counter"], ["watch", "--connect", path, "Counter"],
        ] {
            let process = Process()
            process.executableURL = buildProductsDirectory.appendingPathComponent("rill")
            process.arguments = arguments
            let output = Pipe()
            process.standardOutput = output
            process.standardError = FileHandle.nullDevice
            try process.run()
            // The results (over 400 KB) cannot fit the pipe: once it is half full, the watch is
            // writing what will block it.
            let reader = output.fileHandleForReading.fileDescriptor
            let capacity = fcntl(reader, 1032)  // F_GETPIPE_SZ
            var pending: Int32 = 0
            let deadline = Date().addingTimeInterval(30)
            while Date() < deadline, withUnsafeMutablePointer(to: &pending, { ioctl(reader, UInt(FIONREAD), $0) }) == 0,
                pending < capacity / 2
            {
                usleep(10_000)
            }
            #expect(pending >= capacity / 2, "\(arguments): the watch wrote \(pending) bytes")
            kill(process.processIdentifier, signal)
            let status = Self.exitStatus(of: process)
            #expect(status == 0, "\(arguments): signal \(signal) \(status.map { "gave \($0)" } ?? "did not end it")")
            let written = output.fileHandleForReading.readDataToEndOfFile()
            #expect(written.starts(with: Data((arguments.contains("--json") ? #"{"seq":1,"# : "id").utf8)))
        }
        #expect(daemon.stop() == 0)
    }

    @Test func connectingWhereNoDaemonAnswersFailsUnlessRetrying() throws {
        let path = directory.path("store")
        let container = try ModelContainer(
            for: Counter.self, configurations: ModelConfiguration(url: URL(fileURLWithPath: path)))
        container.mainContext.insert(Counter(id: 1, value: 1))
        try container.mainContext.save()
        for target in [path, path + "/rill.sock", "http://127.0.0.1:1"] {
            guard let run = try BadQueryCommandTests.rillWithin30Seconds(["watch", "--connect", target, "Counter"])
            else {
                Issue.record("\(target): still running after 30 s")
                continue
            }
            #expect(run.status == 1, "\(target): \(run.error)")
            #expect(run.error.contains("no daemon answers at "), "\(run.error)")
            #expect(run.error.contains("--retry"), "\(run.error)")
            #expect(!run.error.contains("reconnecting"))
        }
        #expect(try runBuilt("rill", ["watch", "--retry", path, "Counter"]).status == 64)

        // With --retry, the watch waits for the daemon, then streams.
        let waiting = try RillProcess(["watch", "--json", "--retry", "--connect", path, "Counter"])
        let daemon = try DaemonProcess(store: path, log: directory.path("serve.log"))
        #expect(waiting.wait { $0.first?.contains(#""results""#) == true }, "\(waiting.output)")
        #expect(waiting.stop(SIGINT) == 0)

        // Without it, a watch whose daemon went away ends with status 1.
        let watching = try RillProcess(["watch", "--json", "--connect", path, "Counter"])
        #expect(watching.wait { $0.first?.contains(#""results""#) == true }, "\(watching.output)")
        #expect(daemon.stop() == 0)
        #expect(Self.exitStatus(of: watching.process) == 1)
    }

    @Test func aJSONWatchPrintsProgressThroughQuietCommits() throws {
        let path = directory.path("store")
        let container = try ModelContainer(
            for: Counter.self, configurations: ModelConfiguration(url: URL(fileURLWithPath: path)))
        let context = ModelContext(container)
        for id in 0..<5 { context.insert(Counter(id: id, value: id)) }
        try context.save()
        let query = "Counter where value >= 1000 sort by value"
        let watcher = try RillProcess(["watch", "--json", "--progress", "0.1", path, query])
        let silent = try RillProcess(["watch", "--json", "--progress", "0", path, query])
        #expect(watcher.wait { !$0.isEmpty } && silent.wait { !$0.isEmpty })
        var head: UInt64 = 0
        for round in 0..<15 {
            context.insert(Counter(id: round % 5, value: 100 + round))
            head = try context.save() ?? head
            usleep(20_000)
        }
        #expect(watcher.wait { $0.last == #"{"seq":\#(head)}"# }, "\(watcher.output)")
        let lines = watcher.output
        #expect(lines.dropFirst().allSatisfy(ResultsLines.isProgress), "\(lines)")
        let sequences = lines.map(ResultsLines.sequence)
        #expect(sequences == sequences.sorted() && Set(sequences).count == sequences.count, "\(sequences)")
        #expect(watcher.stop(SIGTERM) == 0)

        // Resumed from the progress line, the watch starts with the next change.
        let resumed = try RillProcess(["watch", "--json", "--since", String(head), path, query])
        context.insert(Counter(id: 2, value: 5_000))
        let entered = try context.save()
        #expect(resumed.wait { !$0.isEmpty })
        #expect(resumed.output.first.map(ResultsLines.sequence) == entered)
        #expect(resumed.output.first?.contains(#""insertions":[{"offset":0,"id":2"#) == true, "\(resumed.output)")
        // With --progress 0, the same commits printed no progress.
        #expect(silent.wait { $0.count == 2 })
        #expect(silent.output.count == 2 && ResultsLines.sequence(silent.output[1]) == entered, "\(silent.output)")
        #expect(resumed.stop(SIGTERM) == 0)
        #expect(silent.stop(SIGTERM) == 0)
    }
}
