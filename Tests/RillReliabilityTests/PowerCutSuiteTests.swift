import Foundation
import RillTestSupport
import RillTorture
import Testing

/// The `power-cut` suite at its `make test` size: 10 cuts in full durability, 3 in each relaxed
/// mode, each image verified.
@Suite struct PowerCutSuiteTests {
    @Test func survivesPowerCuts() throws {
        let work = TemporaryDirectory("rill-power-cut")
        let seed = UInt64.random(in: 1...UInt64(UInt32.max))
        print("power-cut seed \(seed) (replay with rill-torture power-cut --scale test --seed \(seed))")
        let report = try PowerCutSuite.run(
            TortureOptions(
                scale: .test, seed: seed, workDirectory: work.url, productsDirectory: buildProductsDirectory))
        print(report)
        #expect(report.skipped == nil)
        #expect(report.passed, "\(report)")
        #expect(report.faults == 16)
    }
}
