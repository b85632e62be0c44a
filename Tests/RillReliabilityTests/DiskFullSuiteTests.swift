import Foundation
import RillTestSupport
import RillTorture
import Testing

/// The `disk-full` suite at `.test` scale: on a small mounted file system, saves fail with
/// `diskFull` and change nothing, reads and the daemon go on, and saves resume once space is
/// freed, with no restart. Where no file system can be mounted (not root, no loop device, no
/// tmpfs), the suite is skipped and says why.
@Suite struct DiskFullSuiteTests {
    @Test func fullDiskFailsSavesCleanlyAndSavesResumeOnceFreed() throws {
        let directory = TemporaryDirectory("rill-disk-full")
        let seed = UInt64.random(in: 1...UInt64(UInt32.max))
        print("disk-full seed \(seed)")
        let report = try DiskFullSuite.run(
            TortureOptions(
                scale: .test, seed: seed, workDirectory: directory.url, productsDirectory: buildProductsDirectory))
        print(report)
        if let skipped = report.skipped {
            print("disk-full skipped: \(skipped)")
            return
        }
        #expect(report.passed, "\(report)")
        #expect(report.faults == 5)
    }
}
