import Foundation

/// One measure of the soak sampled over time (a process's resident memory, the file's free
/// space, the reader slots in use), and the rule that says whether it grows without bound.
///
/// The rule, on the samples after the first sixth (start-up: caches filling, maps growing):
/// split them into a middle and a last half, and call the measure unbounded when all three hold:
///
/// - the maximum of the last half exceeds the maximum of the middle half by more than
///   `tolerance` (a fraction) plus `slack` (in the measure's unit): it reached new heights late;
/// - the least-squares slope of the last half, over its duration, adds more than `tolerance` of
///   its mean plus `slack`: it is still climbing, not a step that levelled off;
/// - it holds its height at the end: the mean of the last three samples is within a quarter of
///   the late rise (the last half's peak less the middle half's) of that peak. A measure that
///   stepped up late and is being given back (a reader that pinned a snapshot for a while and
///   let go, its freed pages reused since) has stopped growing; one still at its peak has not
///   shown that it stops.
///
/// A leak grows steadily and fails all three; a one-off step (a compaction, a burst of
/// subscribers) or noise around a level passes at least one.
package struct SoakSeries: Sendable {
    package var name: String
    /// How values print: `MiB` (bytes shown in MiB) or a plain count.
    package var unit: Unit
    package var tolerance: Double
    package var slack: Double
    package private(set) var values: [Double] = []

    package enum Unit: Sendable {
        case mebibytes
        case count
    }

    package init(name: String, unit: Unit, tolerance: Double = 0.2, slack: Double) {
        self.name = name
        self.unit = unit
        self.tolerance = tolerance
        self.slack = slack
    }

    package mutating func add(_ value: Double) { values.append(value) }

    /// Why the measure looks unbounded, or nil when it holds.
    package var growth: String? {
        let settled = Array(values.dropFirst(values.count / 6))
        guard settled.count >= 6 else { return nil }
        let middle = settled[..<(settled.count / 2)]
        let last = Array(settled[(settled.count / 2)...])
        let middleMax = middle.max()!
        let lastMax = last.max()!
        let mean = last.reduce(0, +) / Double(last.count)
        let rise = Self.slope(last) * Double(last.count - 1)
        let newHeights = lastMax > middleMax * (1 + tolerance) + slack
        let climbing = rise > mean * tolerance + slack
        let end = last.suffix(3).reduce(0, +) / Double(min(3, last.count))
        let held = end >= lastMax - (lastMax - middleMax) / 4
        guard newHeights && climbing && held else { return nil }
        return "\(name) grows without bound: its last half peaks at \(format(lastMax)) against "
            + "\(format(middleMax)) before, climbs by \(format(rise)) across it, and ends at \(format(end))"
    }

    /// The series, compactly: the minimum, the maximum, and every `step`-th sample.
    package func summary(points: Int = 12) -> String {
        guard let low = values.min(), let high = values.max() else { return "\(name): no samples" }
        let step = max(1, values.count / points)
        let shown = stride(from: 0, to: values.count, by: step).map { format(values[$0]) }
        return "\(name) [\(unitName)]: min \(format(low)), max \(format(high)), last \(format(values.last!)); "
            + shown.joined(separator: " ")
    }

    private var unitName: String {
        switch unit {
        case .mebibytes: "MiB"
        case .count: "count"
        }
    }

    private func format(_ value: Double) -> String {
        switch unit {
        case .mebibytes: String(format: "%.1f", value / 1_048_576)
        case .count: String(format: "%.0f", value)
        }
    }

    /// The least-squares slope of `values` against their index.
    private static func slope(_ values: [Double]) -> Double {
        let count = Double(values.count)
        let meanX = (count - 1) / 2
        let meanY = values.reduce(0, +) / count
        var numerator = 0.0
        var denominator = 0.0
        for (index, value) in values.enumerated() {
            numerator += (Double(index) - meanX) * (value - meanY)
            denominator += (Double(index) - meanX) * (Double(index) - meanX)
        }
        return denominator == 0 ? 0 : numerator / denominator
    }
}
