/// The `power-cut` suite (being built).
package enum PowerCutSuite {
    package static func run(_ options: TortureOptions) throws -> TortureReport {
        var report = TortureReport(suite: "power-cut", seed: options.seed)
        report.skipped = "not built yet"
        return report
    }
}
