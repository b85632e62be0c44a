import Synchronization

/// A histogram of the daemon's metrics: counts of observations in buckets with fixed upper
/// bounds, and their sum, each an atomic so that observing one takes no lock.
///
/// Observations are whole numbers of a unit (nanoseconds, records); `scale` turns the unit into
/// the one exposed (seconds: `1e-9`). Each bucket counts the observations that fall in it alone;
/// ``snapshot()`` makes them cumulative, as Prometheus wants them.
package final class MetricHistogram: Sendable {
    /// The buckets' upper bounds, in the observed unit, ascending; a last bucket, `+Inf`, follows.
    package let bounds: [UInt64]
    /// What one observed unit is in the exposed unit.
    package let scale: Double
    private let counts: [Counter]
    private let total = Atomic<UInt64>(0)

    /// One bucket's count.
    private final class Counter: Sendable {
        let value = Atomic<UInt64>(0)
    }

    /// A histogram with buckets up to each of `bounds` (ascending) and one past them.
    package init(bounds: [UInt64], scale: Double = 1) {
        precondition(zip(bounds, bounds.dropFirst()).allSatisfy { $0 < $1 }, "histogram bounds must ascend")
        self.bounds = bounds
        self.scale = scale
        counts = (0...bounds.count).map { _ in Counter() }
    }

    /// Counts `value` (in the observed unit).
    package func observe(_ value: UInt64) {
        let index = bounds.firstIndex { value <= $0 } ?? bounds.count
        counts[index].value.wrappingAdd(1, ordering: .relaxed)
        total.wrappingAdd(value, ordering: .relaxed)
    }

    /// The cumulative counts at each bound (in the exposed unit), the last at `+Inf`, and the sum.
    ///
    /// The count is that of the `+Inf` bucket, so that the two always agree; an observation made
    /// meanwhile may be in the sum and not yet in the buckets.
    package func snapshot() -> (buckets: [(bound: Double, count: UInt64)], count: UInt64, sum: Double) {
        var running: UInt64 = 0
        var buckets: [(bound: Double, count: UInt64)] = []
        for (index, counter) in counts.enumerated() {
            running &+= counter.value.load(ordering: .relaxed)
            let bound = index < bounds.count ? Double(bounds[index]) * scale : .infinity
            buckets.append((bound, running))
        }
        return (buckets, running, Double(total.load(ordering: .relaxed)) * scale)
    }
}
