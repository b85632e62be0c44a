import Foundation

/// Rates of several measures of one row taken in rounds: each round runs every measure once, back
/// to back, starting with a different one each round, so that the machine's drift over the run
/// meets them all alike.
struct InterleavedRates {
    /// The rates of each measure, one a round, in the order the measures were given.
    private(set) var samples: [[Double]]

    /// Runs each of `measures` measures (`measure(index)` returns the rate of measure `index`)
    /// `rounds` times, rotating which goes first.
    static func collect(rounds: Int, measures: Int, _ measure: (Int) throws -> Double) rethrows -> InterleavedRates {
        var rates = InterleavedRates(samples: Array(repeating: [], count: measures))
        for round in 0..<rounds {
            for step in 0..<measures {
                let index = (round + step) % measures
                rates.samples[index].append(try measure(index))
            }
        }
        return rates
    }

    /// The median rate of measure `index`.
    func median(_ index: Int) -> Double { PairedSamples.median(samples[index]) }

    /// The median over rounds of measure `index` ÷ measure `baseline`, both of the same round.
    func ratio(_ index: Int, to baseline: Int) -> Double {
        PairedSamples.median(zip(samples[index], samples[baseline]).map { $0 / $1 })
    }
}
