import Foundation

/// A random number generator with a printed, replayable seed (SplitMix64).
public struct SeededGenerator: RandomNumberGenerator, Sendable {
    public let seed: UInt64
    private var state: UInt64

    /// Uses `RILL_SEED` from the environment when set, so a failure can be replayed.
    public init(seed: UInt64? = nil, label: String = "") {
        let chosen =
            seed
            ?? ProcessInfo.processInfo.environment["RILL_SEED"].flatMap(UInt64.init)
            ?? UInt64.random(in: 1...UInt64.max)
        self.seed = chosen
        self.state = chosen
        if !label.isEmpty { print("[\(label)] seed \(chosen) (replay with RILL_SEED=\(chosen))") }
    }

    public mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}
