import Foundation
import Rill
import RillClient

extension StatsCommand {
    /// The daemon's samples as `rill stats --json` gives them: each by its name and labels
    /// (`rill_connections_accepted_total{listener="unix"}`), histogram buckets left out.
    static func json(of samples: [MetricsClient.Sample]) -> RecordValue {
        .map(
            samples.filter { !$0.name.hasSuffix("_bucket") }.map { sample in
                let value: RecordValue =
                    sample.value == sample.value.rounded() && abs(sample.value) < 1e15
                    ? .int(Int64(sample.value)) : .double(sample.value)
                return RecordField(name: sample.key, value: value)
            })
    }

    /// The daemon's figures in text, one a line.
    static func lines(of samples: [MetricsClient.Sample], from address: String) -> [String] {
        func value(_ name: String, _ labels: String = "") -> Double {
            samples.first { $0.name == name && $0.labels == labels }?.value ?? 0
        }
        func whole(_ value: Double) -> String { String(Int64(value)) }
        func mean(_ name: String) -> Double? {
            let count = value(name + "_count")
            return count > 0 ? value(name + "_sum") / count : nil
        }
        let saveMean = mean("rill_save_duration_seconds").map { String(format: " (mean %.2f ms)", $0 * 1000) } ?? ""
        let commitMean = mean("rill_commit_records").map { String(format: " (mean %.1f records)", $0) } ?? ""
        var lines = [
            "daemon:    \(address)",
            "  saves:         \(whole(value("rill_saves_total")))\(saveMean)",
            "  commits:       \(whole(value("rill_commits_total")))\(commitMean)",
            "  log head:      \(whole(value("rill_log_head")))",
            "  live queries:  \(whole(value("rill_live_queries")))",
            "  subscribers:   \(whole(value("rill_subscribers")))",
            "  follower lag:  \(whole(value("rill_follower_lag_commits"))) commits, "
                + "\(whole(value("rill_follower_lag_milliseconds"))) ms",
            "  resets:        \(whole(value("rill_subscriber_resets_total", #"reason="queue""#))) (queue full), "
                + "\(whole(value("rill_subscriber_resets_total", #"reason="resume""#))) (resume)",
            "  connections:   \(whole(value("rill_connections_open"))) open, "
                + "\(whole(value("rill_connections_accepted_total", #"listener="unix""#))) accepted on the socket, "
                + "\(whole(value("rill_connections_accepted_total", #"listener="tcp""#))) over TCP",
            "  requests:      \(whole(value("rill_requests_total")))",
        ]
        let rejected = samples.filter { $0.name == "rill_requests_rejected_total" }
        lines.append("  rejected:" + (rejected.isEmpty ? "      none" : ""))
        for sample in rejected {
            lines.append("    \(sample.labels.replacingOccurrences(of: "\"", with: ""))  \(whole(sample.value))")
        }
        return lines
    }
}
