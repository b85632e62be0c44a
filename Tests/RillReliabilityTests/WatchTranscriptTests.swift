import Foundation
import Rill
import RillTestSupport
import RillTorture
import RillWorkloads
import Testing

/// The check of a watcher's lines finds what it must: the lines of a replay of the log pass, and a
/// change left out, a line repeated, or a progress line past an unprinted change are each named.
@Suite struct WatchTranscriptTests {
    @Test func passesTheLinesOfAReplayAndNamesWhatIsLostOrRepeated() throws {
        let directory = TemporaryDirectory()
        let path = directory.path("store")
        let seed = UInt64.random(in: 1...UInt64(UInt32.max))
        var random = SeededGenerator(seed: seed)
        let context = ModelContext(
            try ModelContainer(
                for: TortureItem.self, configurations: ModelConfiguration(url: URL(fileURLWithPath: path))))
        var live: [String] = []
        for number in 0..<120 {
            let writer = Int.random(in: 0..<2, using: &random)
            if Bool.random(using: &random), !live.isEmpty {
                let id = live.remove(at: Int.random(in: 0..<live.count, using: &random))
                context.delete(TortureItem(id: id, writer: 0, number: 0, payload: ""))
            } else if Int.random(in: 0..<3, using: &random) == 0, let id = live.randomElement(using: &random) {
                context.insert(TortureItem(id: id, writer: writer, number: number, payload: "u"))
            } else {
                live.append("i\(number)")
                context.insert(TortureItem(id: "i\(number)", writer: writer, number: number, payload: "i"))
            }
            try context.save()
        }
        var oracle = WatchOracle(writer: 0, limit: 5)
        try oracle.replay(directory: path)
        let replay = try runBuilt("rill", ["watch", path, oracle.text, "--json", "--from", "0"])
        let lines = replay.output.split(separator: "\n").map(String.init)
        #expect(lines.count == oracle.changes.count + 1, "seed \(seed)")

        func problems(_ lines: [String]) -> [String] {
            var transcript = WatchTranscript(name: "watch")
            transcript.add(run: lines)
            return transcript.check(against: oracle).problems
        }
        #expect(problems(lines) == [], "seed \(seed)")
        // Split across two runs, as a restart with --since splits it: still whole.
        var split = WatchTranscript(name: "watch")
        split.add(run: lines.prefix(4))
        split.add(run: lines.dropFirst(4))
        #expect(split.check(against: oracle).problems == [], "seed \(seed)")
        var dropped = lines
        dropped.remove(at: 3)
        #expect(problems(dropped).contains { $0.contains("never printed the change") }, "seed \(seed)")
        var repeated = lines
        repeated.insert(lines[3], at: 4)
        #expect(problems(repeated).contains { $0.contains("sequences must grow") }, "seed \(seed)")
        let progress = #"{"seq":\#(oracle.changes[3].sequence)}"#
        #expect(problems(Array(lines.prefix(3)) + [progress]).contains { $0.contains("never printed") }, "seed \(seed)")
    }
}
