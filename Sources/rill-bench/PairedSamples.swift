import Foundation

/// Timings of a measure and of its baseline, taken in pairs back to back: the medians of each
/// and the median of the pairs' ratios (which the machine's drift between pairs moves less).
struct PairedSamples {
    private(set) var measured: [Double] = []
    private(set) var baseline: [Double] = []

    /// Times `body` and `baseline` in pairs until at least `rounds` pairs and `seconds` in all,
    /// alternating which of the two goes first.
    static func collect(
        rounds: Int = 3, seconds: Double = 0.3, _ body: () throws -> Double, baseline: () throws -> Double
    ) rethrows -> PairedSamples {
        var samples = PairedSamples()
        let start = now()
        while samples.measured.count < rounds || now() - start < seconds {
            if samples.measured.count.isMultiple(of: 2) {
                let first = try body()
                samples.append(first, try baseline())
            } else {
                let second = try baseline()
                samples.append(try body(), second)
            }
        }
        return samples
    }

    mutating func append(_ measured: Double, _ baseline: Double) {
        self.measured.append(measured)
        self.baseline.append(baseline)
    }

    var medianMeasured: Double { Self.median(measured) }
    var medianBaseline: Double { Self.median(baseline) }
    /// The median of measured ÷ baseline over the pairs.
    var medianRatio: Double { Self.median(zip(measured, baseline).map { $0 / $1 }) }
    /// The median of baseline ÷ measured over the pairs: the ratio of two rates measured as times.
    var medianInverseRatio: Double { Self.median(zip(measured, baseline).map { $1 / $0 }) }
    var count: Int { measured.count }

    static func median(_ values: [Double]) -> Double {
        let sorted = values.sorted()
        guard !sorted.isEmpty else { return .nan }
        return sorted.count % 2 == 1
            ? sorted[sorted.count / 2] : (sorted[sorted.count / 2 - 1] + sorted[sorted.count / 2]) / 2
    }
}
