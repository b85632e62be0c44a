import Foundation
import RillFuzzTargets
import Testing

/// Every input of the committed fuzzing corpus (`Tests/Fuzz/Corpus/<target>/`) and every crash
/// reproducer (`Tests/Fuzz/Crashes/<target>/`) replayed through its target: the oracles hold on
/// all of them, so a crash that was fixed stays fixed.
@Suite struct FuzzCorpusTests {
    static let fuzzDirectory = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
        .deletingLastPathComponent().appendingPathComponent("Fuzz")

    static func inputs(of target: String) -> [URL] {
        ["Corpus", "Crashes"].flatMap { kind -> [URL] in
            let directory = fuzzDirectory.appendingPathComponent(kind).appendingPathComponent(target)
            let names = (try? FileManager.default.contentsOfDirectory(atPath: directory.path)) ?? []
            return names.sorted().filter { !$0.hasPrefix(".") }.map { directory.appendingPathComponent($0) }
        }
    }

    @Test(arguments: FuzzTargets.all.map(\.name))
    func corpusAndCrashesPass(_ name: String) throws {
        let target = try #require(FuzzTargets.named(name))
        let inputs = Self.inputs(of: name)
        #expect(!inputs.isEmpty, "no corpus for \(name) in \(Self.fuzzDirectory.path)")
        for input in inputs {
            do {
                try target.run(Array(try Data(contentsOf: input)))
            } catch {
                Issue.record("\(input.lastPathComponent): \(error)")
            }
        }
    }
}
