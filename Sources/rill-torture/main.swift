// rill-torture: the reliability suites (see Documentation/Reliability.md).
//
//   rill-torture <suite>|all [--scale test|ci|torture] [--seed N] [--work DIR]
//   rill-torture worker <role> …      (a child process of a suite)
//
// Each suite prints one line of figures: the faults injected, the saves acknowledged, the saves
// lost (which must be 0), and what else it measured. The exit status is 1 when any suite failed.
import Foundation
import RillTorture

#if canImport(Glibc)
    import Glibc
#endif

let arguments = Array(CommandLine.arguments.dropFirst())
let usage =
    "usage: rill-torture <suite>|all [--scale test|ci|torture] [--seed N] [--work DIR]\n"
    + "suites: \((TortureSuites.all + TortureSuites.long).map(\.name).joined(separator: ", ")) "
    + "(all runs every one but \(TortureSuites.long.map(\.name).joined(separator: ", ")))"

guard let command = arguments.first else {
    FileHandle.standardError.write(Data((usage + "\n").utf8))
    exit(2)
}

if command == "worker" {
    guard arguments.count >= 2, let worker = TortureSuites.workers.first(where: { $0.role == arguments[1] }) else {
        FileHandle.standardError.write(
            Data("workers: \(TortureSuites.workers.map(\.role).joined(separator: ", "))\n".utf8))
        exit(2)
    }
    do {
        try worker.run(Array(arguments.dropFirst(2)))
        exit(0)
    } catch {
        FileHandle.standardError.write(Data("rill-torture worker \(worker.role): \(error)\n".utf8))
        exit(1)
    }
}

let options = TortureArguments(Array(arguments.dropFirst()))
let suites =
    command == "all" ? TortureSuites.all : (TortureSuites.all + TortureSuites.long).filter { $0.name == command }
guard !suites.isEmpty else {
    FileHandle.standardError.write(Data((usage + "\n").utf8))
    exit(2)
}
guard let scale = TortureScale(name: options.value("--scale") ?? "torture") else {
    FileHandle.standardError.write(Data("--scale is test (or ci) or torture\n".utf8))
    exit(2)
}
let seed = options.value("--seed").flatMap(UInt64.init) ?? UInt64.random(in: 1...UInt64(UInt32.max))
let work = URL(fileURLWithPath: options.value("--work") ?? NSTemporaryDirectory())
    .appendingPathComponent("rill-torture-\(getpid())")
let products = URL(fileURLWithPath: CommandLine.arguments[0]).resolvingSymlinksInPath().deletingLastPathComponent()
var failed = false
for suite in suites {
    let started = Date()
    let report: TortureReport
    do {
        try FileManager.default.createDirectory(at: work, withIntermediateDirectories: true)
        report = try suite.run(
            TortureOptions(scale: scale, seed: seed, workDirectory: work, productsDirectory: products))
    } catch {
        print("\(suite.name): FAILED, seed \(seed): \(error)")
        failed = true
        continue
    }
    print("\(report) (\(String(format: "%.1f", Date().timeIntervalSince(started))) s)")
    if !report.passed { failed = true }
}
if !failed { try? FileManager.default.removeItem(at: work) }
exit(failed ? 1 : 0)
