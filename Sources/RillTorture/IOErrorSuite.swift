/// The `io-error` suite (being built).
package enum IOErrorSuite {
    package static func run(_ options: TortureOptions) throws -> TortureReport {
        var report = TortureReport(suite: "io-error", seed: options.seed)
        report.skipped = "not built yet"
        return report
    }
}
