import Foundation
import RillTestSupport
import RillTorture
import Testing

/// The `map-growth` suite at `.test` scale: from a 1 MiB map to 32 MiB of data with values of
/// 100 B to 1 MiB, every save succeeds exactly once, and a reader process with live queries adopts
/// each grown map and sees the last commit.
@Suite struct MapGrowthSuiteTests {
    @Test func savesSucceedOnceAndReadersAdoptTheGrownMap() throws {
        let directory = TemporaryDirectory("rill-map-growth")
        let seed = UInt64.random(in: 1...UInt64(UInt32.max))
        print("map-growth seed \(seed)")
        let report = try MapGrowthSuite.run(
            TortureOptions(
                scale: .test, seed: seed, workDirectory: directory.url, productsDirectory: buildProductsDirectory))
        print(report)
        #expect(report.passed, "\(report)")
        #expect(report.faults >= 5, "the map grew \(report.faults) times")
    }
}
