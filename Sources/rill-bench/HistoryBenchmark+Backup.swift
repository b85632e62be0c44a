import Foundation
import Rill

extension HistoryBenchmark {
    /// `Store.backup(to:)` beside a plain copy of the same `data.mdb`, while nothing writes:
    /// medians of five rounds, each a pair back to back, for the file as it is at `point`.
    func backupRows(
        of store: Store, file: URL, at point: BuildPoint, _ scratch: URL
    ) throws -> [ComparisonTable.Row] {
        let fileSize = store.fileSize
        var backupSize = 0
        var round = 0
        let samples = try PairedSamples.collect(rounds: 5, seconds: 0) {
            round += 1
            let destination = scratch.appendingPathComponent("backup-\(round)")
            defer { try? FileManager.default.removeItem(at: destination) }
            let seconds = try measure { try store.backup(to: destination.path) }
            backupSize = Self.size(of: destination.appendingPathComponent("data.mdb").path)
            return seconds
        } baseline: {
            let destination = scratch.appendingPathComponent("copy")
            defer { try? FileManager.default.removeItem(at: destination) }
            try FileManager.default.createDirectory(at: destination, withIntermediateDirectories: true)
            return try measure {
                try Self.copyFile(file.path, to: destination.appendingPathComponent("data.mdb").path)
            }
        }
        return [
            .init(
                name: "\(point.rawValue): data.mdb \(Self.mebibytes(fileSize)), backup \(Self.mebibytes(backupSize))",
                rill: Self.milliseconds(samples.medianMeasured), baseline: Self.milliseconds(samples.medianBaseline),
                unit: "ms", higherIsBetter: false, target: "reported", ratio: samples.medianRatio)
        ]
    }

    /// Copies the file at `source` to a new file at `destination` by reading and writing it in
    /// blocks of 1 MiB, then flushes the copy: the plain copy a backup is compared with.
    static func copyFile(_ source: String, to destination: String) throws {
        let input = open(source, O_RDONLY | O_CLOEXEC)
        guard input >= 0 else { throw POSIXError(POSIXErrorCode(rawValue: errno) ?? .EIO) }
        defer { close(input) }
        let output = open(destination, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0o600)
        guard output >= 0 else { throw POSIXError(POSIXErrorCode(rawValue: errno) ?? .EIO) }
        defer { close(output) }
        let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: 1 << 20, alignment: 4096)
        defer { buffer.deallocate() }
        while true {
            let count = read(input, buffer.baseAddress, buffer.count)
            guard count >= 0 else { throw POSIXError(POSIXErrorCode(rawValue: errno) ?? .EIO) }
            if count == 0 { break }
            var written = 0
            while written < count {
                let step = write(output, buffer.baseAddress! + written, count - written)
                guard step > 0 else { throw POSIXError(POSIXErrorCode(rawValue: errno) ?? .EIO) }
                written += step
            }
        }
        guard fsync(output) == 0 else { throw POSIXError(POSIXErrorCode(rawValue: errno) ?? .EIO) }
    }

    static func size(of path: String) -> Int {
        var info = stat()
        return stat(path, &info) == 0 ? Int(info.st_size) : 0
    }
}
