import Foundation

/// Metrics written in Prometheus's text exposition format, version 0.0.4: for each metric a
/// `# HELP` and a `# TYPE` line, then its samples, one a line (`name{label="value"} 42`).
struct PrometheusText {
    /// The content type a scraper expects of this format.
    static let contentType = "text/plain; version=0.0.4; charset=utf-8"

    private(set) var text = ""

    /// Labels of one sample, in order.
    typealias Labels = [(name: String, value: String)]

    /// A counter (its name ends in `_total`) with one sample per set of labels.
    mutating func counter(_ name: String, _ help: String, _ samples: [(Labels, UInt64)]) {
        precondition(name.hasSuffix("_total"), "a counter's name ends in _total")
        header(name, help, "counter")
        for (labels, value) in samples { sample(name, labels, String(value)) }
    }

    /// A counter of one sample, without labels.
    mutating func counter(_ name: String, _ help: String, _ value: UInt64) {
        counter(name, help, [([], value)])
    }

    /// A gauge of one sample, without labels.
    mutating func gauge(_ name: String, _ help: String, _ value: Double) {
        header(name, help, "gauge")
        sample(name, [], Self.number(value))
    }

    /// A histogram: its cumulative buckets (`_bucket{le="…"}`, the last `+Inf`), `_sum` and `_count`.
    mutating func histogram(_ name: String, _ help: String, _ histogram: MetricHistogram) {
        let snapshot = histogram.snapshot()
        header(name, help, "histogram")
        for bucket in snapshot.buckets {
            sample(name + "_bucket", [("le", Self.number(bucket.bound))], String(bucket.count))
        }
        sample(name + "_sum", [], Self.number(snapshot.sum))
        sample(name + "_count", [], String(snapshot.count))
    }

    private mutating func header(_ name: String, _ help: String, _ type: String) {
        text += "# HELP \(name) \(Self.escapedHelp(help))\n# TYPE \(name) \(type)\n"
    }

    private mutating func sample(_ name: String, _ labels: Labels, _ value: String) {
        text += name
        if !labels.isEmpty {
            text += "{" + labels.map { "\($0.name)=\"\(Self.escapedLabel($0.value))\"" }.joined(separator: ",") + "}"
        }
        text += " \(value)\n"
    }

    /// A value as the format writes it: whole numbers without a fraction, `+Inf`, `-Inf`, `NaN`.
    static func number(_ value: Double) -> String {
        if value.isNaN { return "NaN" }
        if value.isInfinite { return value > 0 ? "+Inf" : "-Inf" }
        if value == value.rounded(), abs(value) < 1e15 { return String(Int64(value)) }
        return String(value)
    }

    /// A label value: backslash, double quote and line feed escaped.
    static func escapedLabel(_ value: String) -> String {
        value.replacingOccurrences(of: "\\", with: "\\\\").replacingOccurrences(of: "\"", with: "\\\"")
            .replacingOccurrences(of: "\n", with: "\\n")
    }

    /// A help text: backslash and line feed escaped.
    static func escapedHelp(_ value: String) -> String {
        value.replacingOccurrences(of: "\\", with: "\\\\").replacingOccurrences(of: "\n", with: "\\n")
    }
}
