/// The `kill` suite (being built).
package enum KillSuite {
    package static func run(_ options: TortureOptions) throws -> TortureReport {
        var report = TortureReport(suite: "kill", seed: options.seed)
        report.skipped = "not built yet"
        return report
    }
}
