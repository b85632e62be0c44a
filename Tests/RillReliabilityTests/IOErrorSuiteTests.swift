import Foundation
import RillTestSupport
import RillTorture
import Testing

/// The `io-error` suite at `.test` scale: the Nth write or flush of the store file fails, and no
/// acknowledged save is lost, no unacknowledged one committed, the error is typed and the store
/// goes on serving in the same process.
@Suite struct IOErrorSuiteTests {
    @Test func failedWritesAndFlushesLoseNothingAndTheStoreRecovers() throws {
        let directory = TemporaryDirectory("rill-io-error")
        let seed = UInt64.random(in: 1...UInt64(UInt32.max))
        print("io-error seed \(seed)")
        let report = try IOErrorSuite.run(
            TortureOptions(
                scale: .test, seed: seed, workDirectory: directory.url, productsDirectory: buildProductsDirectory))
        print(report)
        #expect(report.skipped == nil)
        #expect(report.passed, "\(report)")
        #expect(report.faults > 0)
    }
}
