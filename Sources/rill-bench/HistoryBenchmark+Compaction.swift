import Foundation
import Rill

extension HistoryBenchmark {
    /// `rill compact`'s two steps beside a plain copy of the same `data.mdb`: folding the log
    /// before a commit into the snapshot (`Store.compact(before:)`, one synced write
    /// transaction), and shrinking the file (`Store.reclaimSpace`, a compacted copy renamed over
    /// it). Each round works on a fresh backup of the store, since compaction changes it; the
    /// median of three rounds for each number of commits folded.
    func compactionTable(of store: Store, head: UInt64, scratch: URL) throws -> ComparisonTable {
        var table = ComparisonTable(title: "compaction beside a plain copy of data.mdb", baselineName: "copy")
        table.rillName = "compact"
        table.note =
            "ratio: median over 3 rounds of compact ÷ copy, back to back, each round on a fresh backup; fold: "
            + "Store.compact(before:), the snapshot of every record written and the commits dropped in one "
            + "synced transaction; shrink: Store.reclaimSpace, a compacted copy of data.mdb renamed over it; "
            + "copy: the file read and written in 1 MiB blocks, fsynced"
        let folds = [1_000, 10_000, 100_000].filter { UInt64($0) < head }
        for fold in folds {
            var folding: [(Double, Double)] = []
            var shrinking: [(Double, Double)] = []
            var sizes = (before: 0, after: 0, snapshot: 0)
            for round in 0..<3 {
                let copy = scratch.appendingPathComponent("compact-\(fold)-\(round)")
                defer { try? FileManager.default.removeItem(at: copy) }
                try store.backup(to: copy.path)
                let copyTime = try measure {
                    let destination = scratch.appendingPathComponent("compact-copy")
                    defer { try? FileManager.default.removeItem(at: destination) }
                    try FileManager.default.createDirectory(at: destination, withIntermediateDirectories: true)
                    try Self.copyFile(
                        copy.appendingPathComponent("data.mdb").path,
                        to: destination.appendingPathComponent("data.mdb").path)
                }
                var report: StoreCompactionReport?
                let foldTime = try measure {
                    let opened = try Store(directory: copy.path, options: StoreOptions(), create: false)
                    report = try opened.compact(before: UInt64(fold) + 1)
                }
                guard let report else { continue }
                precondition(report.droppedCommits == fold, "folded \(report.droppedCommits) commits, not \(fold)")
                var rewrite = StoreFileRewrite.busy
                let shrinkTime = try measure { rewrite = try Store.reclaimSpace(directory: copy.path) }
                guard case .rewritten(let before, let after) = rewrite else {
                    throw RillError(.storage, "the copy of the store was still open: its file was not shrunk")
                }
                sizes = (before, after, report.snapshotRecords)
                folding.append((foldTime, copyTime))
                shrinking.append((shrinkTime, copyTime))
            }
            func median(_ pairs: [(Double, Double)]) -> (Double, Double, Double) {
                let ratios = pairs.map { $0.0 / $0.1 }.sorted()
                let measured = pairs.map(\.0).sorted()
                let baseline = pairs.map(\.1).sorted()
                return (measured[1], baseline[1], ratios[1])
            }
            let (foldMedian, foldCopy, foldRatio) = median(folding)
            let (shrinkMedian, shrinkCopy, shrinkRatio) = median(shrinking)
            table.rows.append(
                .init(
                    name: "fold \(fold) commits into a snapshot of \(sizes.snapshot) records",
                    rill: Self.milliseconds(foldMedian), baseline: Self.milliseconds(foldCopy), unit: "ms",
                    higherIsBetter: false, target: "reported", ratio: foldRatio))
            table.rows.append(
                .init(
                    name: "then shrink data.mdb \(Self.mebibytes(sizes.before)) → \(Self.mebibytes(sizes.after))",
                    rill: Self.milliseconds(shrinkMedian), baseline: Self.milliseconds(shrinkCopy), unit: "ms",
                    higherIsBetter: false, target: "reported", ratio: shrinkRatio))
        }
        return table
    }
}
