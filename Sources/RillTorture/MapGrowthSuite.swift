/// The `map-growth` suite (being built).
package enum MapGrowthSuite {
    package static func run(_ options: TortureOptions) throws -> TortureReport {
        var report = TortureReport(suite: "map-growth", seed: options.seed)
        report.skipped = "not built yet"
        return report
    }
}
