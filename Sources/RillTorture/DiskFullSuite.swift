/// The `disk-full` suite (being built).
package enum DiskFullSuite {
    package static func run(_ options: TortureOptions) throws -> TortureReport {
        var report = TortureReport(suite: "disk-full", seed: options.seed)
        report.skipped = "not built yet"
        return report
    }
}
