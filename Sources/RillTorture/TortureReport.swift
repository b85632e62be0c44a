import Foundation

/// What one run of a reliability suite did and found: the figure every suite prints.
///
/// A suite fails when it lost an acknowledged save or when a verification found a problem; the
/// figures say how hard it tried (faults injected, saves acknowledged) and anything else it
/// measured (`figures`, printed in order).
package struct TortureReport: Sendable, CustomStringConvertible {
    /// The suite's name, as `rill-torture` takes it.
    package var suite: String
    /// The seed of its random choices: the same seed repeats the run's choices.
    package var seed: UInt64
    /// Faults injected: kills, power cuts, failed calls, fill-and-free cycles, hostile requests.
    package var faults = 0
    /// Saves whose success was reported to their caller.
    package var acknowledged = 0
    /// Acknowledged saves not found afterwards: must be 0.
    package var lost = 0
    /// Further figures, by name, in the order they were added.
    package var figures: [(name: String, value: String)] = []
    /// Every problem a verification found, in a sentence each: must be empty.
    package var problems: [String] = []
    /// Why the suite did not run here, when it could not (no mount, no second user): a skip.
    package var skipped: String?

    package init(suite: String, seed: UInt64) {
        self.suite = suite
        self.seed = seed
    }

    /// Whether the run holds: nothing lost, no problem.
    package var passed: Bool { lost == 0 && problems.isEmpty }

    package mutating func add(_ name: String, _ value: some CustomStringConvertible) {
        figures.append((name, value.description))
    }

    /// Takes in the problems of a verification, each prefixed with where it was found.
    package mutating func record(_ found: [String], at moment: String) {
        problems += found.map { "\(moment): \($0)" }
    }

    package var description: String {
        if let skipped { return "\(suite): skipped (\(skipped))" }
        var parts = [
            "\(suite): \(passed ? "passed" : "FAILED")", "seed \(seed)", "faults \(faults)",
            "acknowledged \(acknowledged)", "lost \(lost)",
        ]
        parts += figures.map { "\($0.name) \($0.value)" }
        var text = parts.joined(separator: ", ")
        for problem in problems.prefix(20) { text += "\n  problem: \(problem)" }
        if problems.count > 20 { text += "\n  … and \(problems.count - 20) more problems" }
        return text
    }
}
