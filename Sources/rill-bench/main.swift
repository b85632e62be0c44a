// rill-bench: Rill's figures beside a baseline measured in the same run.
//
//   swift run -c release rill-bench save
//   swift run -c release rill-bench query
//   swift run -c release rill-bench live
//   swift build -c release && .build/release/rill-bench serve
//   swift build -c release && .build/release/rill-bench resume
//   swift build -c release && .build/release/rill-bench history
//   swift build -c release && .build/release/rill-bench cluster
import Foundation

let benchmarks = ["save", "query", "live", "serve", "resume", "history", "cluster"]
let name = CommandLine.arguments.dropFirst().first ?? ""
// A benchmark that fails (a store it cannot open, a process it runs that exits early) says why
// and exits 1, rather than trapping on an error raised at the top level.
do {
    switch name {
    case "save":
        // rill-bench save [saves] [writers] (parts: single and bulk saves, concurrent writers; both by default)
        var benchmark = SaveBenchmark()
        let parts = CommandLine.arguments.dropFirst(2)
        if let unknown = parts.first(where: { !benchmark.parts.contains($0) }) {
            FileHandle.standardError.write(Data("rill-bench save: no part \(unknown); parts: saves, writers\n".utf8))
            exit(64)
        }
        if !parts.isEmpty { benchmark.parts = Set(parts) }
        try benchmark.run()
    case "query":
        // rill-bench query [records] [indexed] [scans] (parts after the loads; both by default)
        // rill-bench query [records] [runs] loop-<fetch|text|range|read> (one operation repeated, to profile)
        var benchmark = QueryBenchmark()
        let arguments = CommandLine.arguments.dropFirst(2)
        let numbers = arguments.compactMap { Int($0) }
        if let records = numbers.first { benchmark.records = records }
        let parts = arguments.filter { Int($0) == nil && QueryBenchmark.loops[$0] == nil }
        if let unknown = parts.first(where: { !benchmark.parts.contains($0) }) {
            let loops = QueryBenchmark.loops.keys.sorted().joined(separator: ", ")
            FileHandle.standardError.write(
                Data("rill-bench query: no part \(unknown); parts: indexed, scans; loops: \(loops)\n".utf8))
            exit(64)
        }
        if !parts.isEmpty { benchmark.parts = Set(parts) }
        benchmark.loop = arguments.first { QueryBenchmark.loops[$0] != nil }
        if numbers.count > 1 { benchmark.loopRuns = numbers[1] }
        try benchmark.run()
    case "live":
        // rill-bench live [queries] [saves] [re-fetched saves] [many] (many: the main measure only)
        // rill-bench live [queries] typed-sharing (only the typed live queries that share a result)
        var benchmark = LiveBenchmark()
        benchmark.onlyMany = CommandLine.arguments.dropFirst(2).contains("many")
        benchmark.onlyTypedSharing = CommandLine.arguments.dropFirst(2).contains("typed-sharing")
        let arguments = CommandLine.arguments.dropFirst(2).compactMap { Int($0) }
        if arguments.count > 0 { benchmark.queryCount = arguments[0] }
        if arguments.count > 1 { benchmark.saveCount = arguments[1] }
        if arguments.count > 2 { benchmark.refetchSamples = arguments[2] }
        try benchmark.run()
    case "serve":
        // rill-bench serve [subscribers] [seconds], or rill-bench serve follower [saves]
        var benchmark = ServeBenchmark()
        if CommandLine.arguments.dropFirst(2).first == "follower" {
            try benchmark.runFollower(saves: CommandLine.arguments.dropFirst(3).first.flatMap { Int($0) } ?? 2_000)
            exit(0)
        }
        let arguments = CommandLine.arguments.dropFirst(2).compactMap { Int($0) }
        if arguments.count > 0 { benchmark.subscribers = arguments[0] }
        if arguments.count > 1 { benchmark.seconds = Double(arguments[1]) }
        try benchmark.run()
    case "resume":
        // rill-bench resume [records] [saves per writer]
        var benchmark = ResumeBenchmark()
        let arguments = CommandLine.arguments.dropFirst(2).compactMap { Int($0) }
        if arguments.count > 0 { benchmark.records = arguments[0] }
        if arguments.count > 1 { benchmark.savesPerWriter = arguments[1] }
        try benchmark.run()
    case "history":
        // rill-bench history [records] [commits] [measure…] (measures: backup, replay, as-of, resume, compact; all by default)
        var benchmark = HistoryBenchmark()
        let arguments = CommandLine.arguments.dropFirst(2)
        let sizes = arguments.compactMap { Int($0) }
        if sizes.count > 0 { benchmark.records = sizes[0] }
        if sizes.count > 1 { benchmark.commits = sizes[1] }
        let names = arguments.filter { Int($0) == nil }
        if !names.isEmpty {
            benchmark.measures = names.map { name in
                guard let measure = HistoryBenchmark.Measure(rawValue: name) else {
                    FileHandle.standardError.write(
                        Data(
                            ("rill-bench history: no measure \(name); measures: "
                                + HistoryBenchmark.Measure.allCases.map(\.rawValue).joined(separator: ", ") + "\n").utf8
                        ))
                    exit(64)
                }
                return measure
            }
        }
        try benchmark.run()
    case "cluster":
        // rill-bench cluster [saves a writer] [latency samples] [rounds]
        var benchmark = ClusterBenchmark()
        let arguments = CommandLine.arguments.dropFirst(2).compactMap { Int($0) }
        if arguments.count > 0 { benchmark.savesPerWriter = arguments[0] }
        if arguments.count > 1 { benchmark.latencySamples = arguments[1] }
        if arguments.count > 2 { benchmark.rounds = arguments[2] }
        try benchmark.run()
    case "live-writer":
        // The other process of `live`.
        let arguments = Array(CommandLine.arguments.dropFirst(2))
        try LiveBenchmark.writer(directory: arguments[0], count: Int(arguments[1]) ?? 100)
    default:
        FileHandle.standardError.write(Data("usage: rill-bench <\(benchmarks.joined(separator: "|"))>\n".utf8))
        exit(64)
    }
} catch {
    FileHandle.standardError.write(Data("rill-bench \(name): \(error)\n".utf8))
    exit(1)
}
