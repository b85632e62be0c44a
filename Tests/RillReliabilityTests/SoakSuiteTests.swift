import Foundation
import RillTestSupport
import RillTorture
import Testing

/// The soak at its `.test` scale (20 s of mixed load, sampled every second): nothing acknowledged
/// is lost, and no process's memory, the file's free space or the reader slots grow without bound.
@Suite struct SoakSuiteTests {
    @Test func twentySecondsOfMixedLoadStayBounded() throws {
        let directory = TemporaryDirectory("rill-soak")
        let seed = UInt64.random(in: 1...UInt64(UInt32.max))
        let report = try SoakSuite.run(
            TortureOptions(
                scale: .test, seed: seed, workDirectory: directory.url, productsDirectory: buildProductsDirectory))
        print(report)
        #expect(report.passed, "\(report)")
        #expect(report.acknowledged > 0)
    }

    /// The rule that says a measure grows without bound: a steady climb fails it; a level with
    /// noise, a step that levels off, and a series that falls pass it.
    @Test func growthRuleTellsALeakFromALevel() {
        func series(_ values: [Double]) -> SoakSeries {
            var series = SoakSeries(name: "measure", unit: .count, tolerance: 0.2, slack: 1)
            for value in values { series.add(value) }
            return series
        }
        let climbing = (0..<60).map { 10 + Double($0) }
        let level = (0..<60).map { 10 + Double($0 % 3) }
        let step = (0..<60).map { $0 < 25 ? 10.0 : 30.0 + Double($0 % 2) }
        let falling = (0..<60).map { 100 - Double($0) }
        #expect(series(climbing).growth != nil)
        #expect(series(level).growth == nil)
        #expect(series(step).growth == nil)
        #expect(series(falling).growth == nil)
    }
}
