import Foundation
import Rill
import RillWorkloads

extension HistoryBenchmark {
    /// As-of fetches `distance` commits back beside the same fetch now, back to back: the top of
    /// the board (a window of a sorted query) and one player by code, typed, and the top of the
    /// board as a text query.
    func asOf(_ container: ModelContainer, head: UInt64, distances: [Int]) throws -> ComparisonTable {
        let context = ModelContext(container)
        let store = container.store
        let top = topOfBoard
        let topText = try QueryParser.parse(Self.topOfBoardText)
        var random = SeededGenerator(seed: 7)
        var table = ComparisonTable(title: "as-of fetch beside the same fetch now", baselineName: "now")
        table.rillName = "as of"
        // For each measure, its cost per commit back at the longer distances, beyond its cost 1 commit back.
        var perCommit: [(name: String, oneBack: Double, figures: [String])] = []
        for distance in distances {
            let token = HistoryToken(sequence: head - UInt64(distance))
            // Commit `i` of the build (sequence i + 2) gave a player the lap time commits − i.
            if distance < commits {
                let fastest = try context.fetch(top, asOf: token).first?.lapTime
                precondition(fastest == distance + 1, "the as-of leaderboard is not the one recorded")
            }
            let code = Int.random(in: 0..<records, using: &random)
            let one = FetchDescriptor<Player>(predicate: #Predicate { $0.code == code })
            let fetches: [(String, () throws -> Int, () throws -> Int)] = [
                (
                    "fetch(_:asOf:), top 50 by lap time", { try context.fetch(top, asOf: token).count },
                    { try context.fetch(top).count }
                ),
                (
                    "fetch(_:asOf:), 1 player by code", { try context.fetch(one, asOf: token).count },
                    { try context.fetch(one).count }
                ),
                (
                    "Store.run(_:asOf:), text, top 50 by lap time",
                    { try store.run(topText, asOf: .sequence(token.sequence)).rows.count },
                    { try store.run(topText).count }
                ),
            ]
            for (name, past, present) in fetches {
                let samples = try PairedSamples.collect {
                    var count = 0
                    let seconds = try measure { count = try past() }
                    precondition(count > 0)
                    return seconds
                } baseline: {
                    var count = 0
                    let seconds = try measure { count = try present() }
                    precondition(count > 0)
                    return seconds
                }
                table.rows.append(
                    .init(
                        name: "\(name), \(distance) commit\(distance == 1 ? "" : "s") back",
                        rill: Self.milliseconds(samples.medianMeasured),
                        baseline: Self.milliseconds(samples.medianBaseline), unit: "ms", higherIsBetter: false,
                        target: "reported", ratio: samples.medianRatio))
                if distance == 1 { perCommit.append((name, samples.medianMeasured, [])) }
                if distance >= 10_000, let index = perCommit.firstIndex(where: { $0.name == name }) {
                    let microseconds = (samples.medianMeasured - perCommit[index].oneBack) / Double(distance - 1) * 1e6
                    perCommit[index].figures.append(String(format: "%.2f µs at %d", microseconds, distance))
                }
            }
        }
        table.note =
            "ratio: median over pairs of as-of ÷ now, back to back (at least 3 pairs and 0.3 s a row); "
            + "every commit since the token changed the top 50\n"
            + "cost per commit back, (as of at the distance − as of 1 back) ÷ (distance − 1):"
            + perCommit.filter { !$0.figures.isEmpty }.map { "\n  \($0.name): \($0.figures.joined(separator: ", "))" }
            .joined()
        return table
    }
}
