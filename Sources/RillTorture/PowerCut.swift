import Foundation
import Rill
import RillWorkloads

#if canImport(Glibc)
    import Glibc
#endif

/// One power cut of the `power-cut` suite: the store's processes run under the fault shim's
/// journal, are all killed at once, and the store is replaced by an image a disk could hold.
///
/// The store in `directory/store` starts from `data.mdb` as the previous cut left it (its synced
/// image is that file: the disk holds it). A `rill watch --json` process observes every commit
/// (when `observes`), then the writers save batches until the cut. The image is built in `directory/image`, without
/// `lock.mdb` (a reboot clears the lock file's readers and LMDB rebuilds it).
struct PowerCut {
    /// What the cut left.
    struct Outcome {
        /// The saves the writers were told succeeded, in this cut.
        var acknowledged: [AcknowledgedSave] = []
        /// What the observer was told, in order.
        var observed = ObservedCommits()
        /// The image's directory.
        var image: URL
        /// Whether `synced + every journaled write` equals the file the processes left (up to the
        /// writes in flight at the kill): the shim saw every write they made.
        var journalMatchesFile = false
        /// The pieces of unsynced writes the image kept, of all there were.
        var keptPieces = 0
        var pieces = 0
    }

    var options: TortureOptions
    var directory: URL
    var durability: String
    var writers: Int
    var batch: Int
    var payload: ClosedRange<Int>
    var runTime: ClosedRange<Double>
    /// Whether a `rill watch` observes the store. Observers flush before they tell of a commit
    /// made without a flush, so in the relaxed modes a cut without one is where saves get undone.
    var observes: Bool

    var store: URL { directory.appendingPathComponent("store") }
    var journal: URL { directory.appendingPathComponent("journal") }

    /// Runs the cut and builds its image.
    func run(number: Int, using random: inout SeededGenerator) throws -> Outcome {
        let fileManager = FileManager.default
        try fileManager.createDirectory(at: journal, withIntermediateDirectories: true)
        let data = store.appendingPathComponent("data.mdb")
        // The disk holds the file as it is now: the harness made it and nothing has been lost yet.
        try fileManager.copyItem(at: data, to: journal.appendingPathComponent("data.mdb.synced"))
        var environment = ProcessInfo.processInfo.environment
        environment["LD_PRELOAD"] = options.product("libRillFaultShim.so")
        environment["RILL_FAULT_FILES"] = data.path
        environment["RILL_FAULT_JOURNAL"] = journal.path
        environment["SWIFT_BACKTRACE"] = "enable=no"

        var processes: [(process: Process, output: URL)] = []
        func start(_ executable: String, _ arguments: [String], output name: String) throws -> Process {
            let output = directory.appendingPathComponent(name)
            _ = fileManager.createFile(atPath: output.path, contents: nil)
            let process = Process()
            process.executableURL = URL(fileURLWithPath: options.product(executable))
            process.arguments = arguments
            process.environment = environment
            process.standardOutput = try FileHandle(forWritingTo: output)
            let errors = directory.appendingPathComponent(name + ".err")
            _ = fileManager.createFile(atPath: errors.path, contents: nil)
            process.standardError = try FileHandle(forWritingTo: errors)
            try process.run()
            processes.append((process, output))
            return process
        }
        defer {
            for (process, _) in processes where process.isRunning { kill(process.processIdentifier, SIGKILL) }
            for (process, _) in processes { process.waitUntilExit() }
        }
        if observes {
            _ = try start("rill", ["watch", store.path, "TortureItem", "--json", "--progress", "0"], output: "watch")
            try waitForFirstLine(of: directory.appendingPathComponent("watch"), process: processes[0].process)
        }
        for writer in 0..<writers {
            _ = try start(
                "rill-torture",
                [
                    "worker", "writer", store.path, "\(writer)", "--durability", durability, "--batch", "\(batch)",
                    "--payload", "\(payload.lowerBound)-\(payload.upperBound)",
                    "--seed", "\(UInt64.random(in: 1...UInt64(UInt32.max), using: &random))",
                ], output: "writer-\(writer)")
        }
        usleep(UInt32(Double.random(in: runTime, using: &random) * 1_000_000))
        // The power cut: every process of the store dies, in a random order, as fast as it can be done.
        for index in processes.indices.shuffled(using: &random) {
            kill(processes[index].process.processIdentifier, SIGKILL)
        }
        for (process, _) in processes { process.waitUntilExit() }
        for (process, output) in processes where process.terminationReason != .uncaughtSignal {
            let errors = (try? String(contentsOf: URL(fileURLWithPath: output.path + ".err"), encoding: .utf8)) ?? ""
            throw TortureUsage(
                "cut \(number): \(output.lastPathComponent) exited by itself (status \(process.terminationStatus)) "
                    + "before the cut: \(errors.prefix(500))")
        }

        var outcome = Outcome(image: directory.appendingPathComponent("image"))
        for (_, output) in processes.dropFirst(observes ? 1 : 0) {
            let text = try String(contentsOf: output, encoding: .utf8)
            outcome.acknowledged += TortureWriter.acknowledged(inOutput: text)
        }
        if observes { outcome.observed = ObservedCommits(output: try Data(contentsOf: processes[0].output)) }

        let journaled = try PowerCutJournal(directory: journal, name: "data.mdb")
        outcome.journalMatchesFile = journaled.accounts(for: try [UInt8](Data(contentsOf: data)))
        let (image, kept, pieces) = journaled.randomImage(using: &random)
        outcome.keptPieces = kept
        outcome.pieces = pieces
        try fileManager.createDirectory(at: outcome.image, withIntermediateDirectories: true)
        try Data(image).write(to: outcome.image.appendingPathComponent("data.mdb"))
        return outcome
    }

    /// Waits until the observer printed its first results (it watches from then on).
    private func waitForFirstLine(of output: URL, process: Process) throws {
        let deadline = Date().addingTimeInterval(30)
        while Date() < deadline {
            if let data = try? Data(contentsOf: output), data.contains(UInt8(ascii: "\n")) { return }
            guard process.isRunning else {
                // Its output may have been written between the read above and its exit.
                if let data = try? Data(contentsOf: output), data.contains(UInt8(ascii: "\n")) { return }
                let errors =
                    (try? String(contentsOf: URL(fileURLWithPath: output.path + ".err"), encoding: .utf8)) ?? ""
                let ending =
                    process.terminationReason == .uncaughtSignal
                    ? "signal \(process.terminationStatus)" : "status \(process.terminationStatus)"
                throw TortureUsage("rill watch exited (\(ending)) before printing its results: \(errors.prefix(500))")
            }
            usleep(5_000)
        }
        throw TortureUsage("rill watch printed nothing in 30 s")
    }
}
