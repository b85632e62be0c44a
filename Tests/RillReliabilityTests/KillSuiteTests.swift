import Foundation
import RillTestSupport
import RillTorture
import Testing

/// The kill suite at its `.test` scale (20 kills): nothing acknowledged is lost, every
/// verification holds, and both watchers see every change exactly once.
@Suite struct KillSuiteTests {
    @Test func twentyKillsLoseNothing() throws {
        let directory = TemporaryDirectory("rill-kill")
        let seed = UInt64.random(in: 1...UInt64(UInt32.max))
        let report = try KillSuite.run(
            TortureOptions(
                scale: .test, seed: seed, workDirectory: directory.url, productsDirectory: buildProductsDirectory))
        print(report)
        #expect(report.passed, "\(report)")
        #expect(report.faults == 20)
        #expect(report.acknowledged > 0)
    }
}
