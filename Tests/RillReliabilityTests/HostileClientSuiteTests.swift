import Foundation
import RillTestSupport
import RillTorture
import Testing

/// The `hostile` suite at its `make test` size: `rill serve` stays up, answers every malformed
/// request as documented, keeps its memory bounded, frees every hostile connection, and serves a
/// well-behaved client at no worse than twice its baseline p99.
@Suite struct HostileClientSuiteTests {
    @Test func passesAtTestScale() async throws {
        let directory = TemporaryDirectory()
        let seed = UInt64.random(in: 1...UInt64(UInt32.max))
        // Its probe's p99 under abuse is judged against its baseline in the same run: no browser
        // test starts meanwhile.
        let report = try await MachineExclusive.run {
            try HostileClientSuite.run(
                TortureOptions(
                    scale: .test, seed: seed, workDirectory: URL(fileURLWithPath: directory.path("work")),
                    productsDirectory: buildProductsDirectory))
        }
        print(report)
        #expect(report.passed, "\(report)")
    }
}
