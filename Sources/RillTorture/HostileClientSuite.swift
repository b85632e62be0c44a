/// The `hostile` suite (being built).
package enum HostileClientSuite {
    package static func run(_ options: TortureOptions) throws -> TortureReport {
        var report = TortureReport(suite: "hostile", seed: options.seed)
        report.skipped = "not built yet"
        return report
    }
}
