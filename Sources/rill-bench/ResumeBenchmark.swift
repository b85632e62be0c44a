import Dispatch
import Foundation
import Rill
import RillLocks
import RillWorkloads

/// `rill-bench resume`: how fast a watch that resumes from an earlier commit replays the commits
/// it missed, beside the rate at which two writers made them (in the same run).
///
/// Two writer threads, each with its own context, make single-record durable saves to a store of
/// `records` books; then a watch of each query resumes from before the first of those saves, in
/// the library (`RecordLiveQuery(since:)`, the path of `rill watch --since` and of the daemon's
/// `Last-Event-ID`) and through the built `rill watch --json --since`, and is timed until it has
/// caught up with the last commit.
struct ResumeBenchmark {
    var records = 20_000
    var savesPerWriter = 2_000

    static let queries = [
        "Book where isRead == false sort by title limit 50",
        "Book where pages > 250 sort by pages desc",
        "Book where author == \"Author 7\"",
    ]

    func run() throws {
        let scratch = URL(fileURLWithPath: NSTemporaryDirectory()).appendingPathComponent("rill-bench-\(UUID())")
        defer { try? FileManager.default.removeItem(at: scratch) }
        let url = scratch.appendingPathComponent("store")
        print(
            "rill-bench resume: \(records) records; 2 writers × \(savesPerWriter) single-record durable saves, "
                + "then watches resumed from before them\n")
        let container = try ModelContainer(for: Book.self, configurations: ModelConfiguration(url: url))
        var ids: [UUID] = []
        let context = container.mainContext
        for index in 0..<records {
            let book = Book(
                title: "Title \(index * 7_919 % records)", author: "Author \(index % 100)", pages: index % 500,
                isRead: index % 3 == 0)
            ids.append(book.id)
            context.insert(book)
        }
        try context.save()
        let store = container.store
        let identifiers = ids
        let before = try container.lastSequence()

        // The writers: each updates random books, one save at a time.
        let writing = measure {
            DispatchQueue.concurrentPerform(iterations: 2) { writer in
                let context = ModelContext(container)
                var random = SeededGenerator(seed: UInt64(writer + 1))
                for _ in 0..<savesPerWriter {
                    let index = Int.random(in: 0..<records, using: &random)
                    context.insert(
                        Book(
                            id: identifiers[index], title: "Title \(Int.random(in: 0..<records, using: &random))",
                            author: "Author \(Int.random(in: 0..<100, using: &random))",
                            pages: Int.random(in: 0..<500, using: &random), isRead: Bool.random(using: &random)))
                    try! context.save()
                }
            }
        }
        let head = try container.lastSequence()
        let commits = Double(head - before)
        let writeRate = commits / writing

        var table = ComparisonTable(title: "resumed watch → caught up with the head", baselineName: "writers")
        for text in Self.queries {
            let query = try QueryParser.parse(text)
            // `catchUp` returns once the handler has been told of every commit up to the head.
            let library = try measure {
                let live = try RecordLiveQuery(query, store: store, since: before) { _ in }
                try live.catchUp()
            }
            func row(_ name: String, _ seconds: Double) {
                let rate = commits / seconds
                table.rows.append(
                    .init(
                        name: "\(name): \(text)", rill: rate, baseline: writeRate, unit: "commits/s",
                        higherIsBetter: true, target: "≥ 10×", ratio: rate / writeRate))
            }
            row("library", library)
            row("rill watch --json", try watchCommand(store: url.path, query: text, since: before, json: true))
            row("rill watch", try watchCommand(store: url.path, query: text, since: before, json: false))
        }
        table.note =
            "ratio: replay ÷ the two writers' rate (\(Int(commits)) commits in \(String(format: "%.1f", writing)) s); "
            + "the watch replays every commit after the one it resumes from"
        print(table.render())
        try catchUpWhileWriting(container: container, url: url, identifiers: identifiers, since: before)
    }

    /// `rill watch --json --since` resumed from before the backlog while the two writers go on:
    /// when it first prints the head's change, and how far behind it is when they stop.
    private func catchUpWhileWriting(
        container: ModelContainer, url: URL, identifiers: [UUID], since: UInt64
    ) throws {
        // Every update changes the titles' order, so every commit prints a change.
        let text = "Book sort by title"
        let backlog = try container.lastSequence() - since
        let writers = Thread {
            DispatchQueue.concurrentPerform(iterations: 2) { writer in
                let context = ModelContext(container)
                var random = SeededGenerator(seed: UInt64(writer + 11))
                for _ in 0..<savesPerWriter {
                    let index = Int.random(in: 0..<identifiers.count, using: &random)
                    context.insert(
                        Book(
                            id: identifiers[index], title: "Title \(Int.random(in: 0..<records, using: &random))",
                            author: "Author 1", pages: 1, isRead: false))
                    try! context.save()
                }
            }
        }
        let process = Process()
        process.executableURL = URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent()
            .appendingPathComponent("rill")
        process.arguments = ["watch", url.path, text, "--json", "--since", String(since)]
        let output = Pipe()
        process.standardOutput = output
        process.standardError = FileHandle.nullDevice
        let latest = Latest()
        let lock = NSLock()
        let start = now()
        writers.start()
        try process.run()
        let reader = Thread {
            let handle = output.fileHandleForReading
            var pending = Data()
            while true {
                let chunk = handle.availableData
                if chunk.isEmpty { break }
                pending.append(chunk)
                guard let newline = pending.lastIndex(of: UInt8(ascii: "\n")) else { continue }
                // The last whole line's sequence.
                let lines = pending[pending.startIndex..<newline]
                let lastLine = lines.split(separator: UInt8(ascii: "\n")).last ?? lines[...]
                if let seq = Self.sequence(of: lastLine) { lock.withLock { latest.count = Int(seq) } }
                pending.removeSubrange(pending.startIndex...newline)
            }
        }
        reader.start()
        var caughtUp: Double?
        var finished: Double?
        var finalLag = 0.0
        let deadline = start + 300
        while now() < deadline {
            let head = try container.lastSequence()
            let seen = UInt64(lock.withLock { latest.count })
            if caughtUp == nil, seen >= head { caughtUp = now() - start }
            if finished == nil, writers.isFinished { finished = now() }
            if let finished, seen >= head {
                finalLag = now() - finished
                break
            }
            usleep(2_000)
        }
        process.terminate()
        process.waitUntilExit()
        let total = try container.lastSequence() - since
        print(
            "\nrill watch --json --since, resumed \(backlog) commits back while 2 writers make \(2 * savesPerWriter) more "
                + "(\(text), \(identifiers.count) rows):")
        print(
            "  caught up with the writers after "
                + (caughtUp.map { String(format: "%.2f s", $0) } ?? "— (not while they wrote)")
                + String(format: "; %.0f ms behind the last commit when they stopped", finalLag * 1000)
                + "; \(total) commits replayed or followed")
    }

    private static func sequence(of line: Data.SubSequence) -> UInt64? {
        let prefix = Array("{\"seq\":".utf8)
        guard line.starts(with: prefix) else { return nil }
        var value: UInt64 = 0
        for byte in line.dropFirst(prefix.count) {
            guard (0x30...0x39).contains(byte) else { break }
            value = value * 10 + UInt64(byte - 0x30)
        }
        return value
    }

    private final class Latest: @unchecked Sendable {
        var count = 0
    }

    /// Seconds until `rill watch --json --since` prints the change of the head commit (or, when
    /// the head did not change the results, until it has printed every change).
    private func watchCommand(store: String, query: String, since: UInt64, json: Bool) throws -> Double {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent()
            .appendingPathComponent("rill")
        process.arguments = ["watch", store, query, "--since", String(since)] + (json ? ["--json"] : [])
        let output = Pipe()
        process.standardOutput = output
        process.standardError = FileHandle.nullDevice
        let start = now()
        try process.run()
        // The last change printed is the newest commit that changed the results: a change at the
        // head, or no output for a while after the last one.
        var last = start
        let reader = output.fileHandleForReading
        let lastChange = try expectedLastChange(store: store, query: query, since: since)
        let marker = Data((json ? "{\"seq\":\(lastChange ?? 0)," : "── commit \(lastChange ?? 0):").utf8)
        // Only the newest output is searched (with the end of the output before it, where the
        // marker may begin), so reading keeps pace with the watch.
        var tail = Data()
        while true {
            let chunk = reader.availableData
            if chunk.isEmpty { break }
            last = now()
            tail.append(chunk)
            if lastChange != nil, tail.range(of: marker) != nil { break }
            tail = tail.suffix(marker.count)
        }
        process.terminate()
        process.waitUntilExit()
        return last - start
    }

    /// The sequence of the last commit after `since` that changed the query's results.
    private func expectedLastChange(store: String, query: String, since: UInt64) throws -> UInt64? {
        let container = try ModelContainer(
            for: Book.self, configurations: ModelConfiguration(url: URL(fileURLWithPath: store)))
        let last = Latest()
        let live = try RecordLiveQuery(try QueryParser.parse(query), store: container.store, since: since) { event in
            if case .change(let change) = event { last.count = Int(change.sequence) }
        }
        try live.catchUp()
        return last.count == 0 ? nil : UInt64(last.count)
    }
}
