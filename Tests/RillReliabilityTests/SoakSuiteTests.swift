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
    /// noise, a step that levels off, a late step that is given back, and a series that falls pass
    /// it; a climb in many steps, and a late one still climbing at the end, fail it.
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
        // The soak's second full run: free space level, a step near the end, then reused.
        let lateStep: [Double] = (0..<180).map { (index: Int) -> Double in
            index < 168 ? 5 + Double(index % 4) : 29 - Double(index - 168) * 0.6
        }
        // The soak's third full run: free space level, then climbing fast to the end.
        let lateClimb: [Double] = (0..<180).map { (index: Int) -> Double in
            index < 160 ? 5 + Double(index % 4) : 5 + Double(index - 160) * 9
        }
        let stairs: [Double] = (0..<60).map { (index: Int) -> Double in 10 + Double(index / 5) * 4 }
        let noisyClimb: [Double] = (0..<60).map { (index: Int) -> Double in
            10 + Double(index) + (index % 2 == 0 ? 3 : -3)
        }
        #expect(series(climbing).growth != nil)
        #expect(series(level).growth == nil)
        #expect(series(step).growth == nil)
        #expect(series(falling).growth == nil)
        #expect(series(lateStep).growth == nil)
        #expect(series(lateClimb).growth != nil)
        #expect(series(stairs).growth != nil)
        #expect(series(noisyClimb).growth != nil)
    }
}
