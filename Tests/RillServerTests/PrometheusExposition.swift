import Foundation

/// A parser of Prometheus's text exposition format (version 0.0.4), written for the tests from
/// the format's description, and strict where the format is: it is the oracle that `/metrics`
/// follows the format, independent of the code that writes it.
///
/// It checks that every sample belongs to a family whose `# HELP` and `# TYPE` came first; that
/// a family is declared once; that a counter's name ends in `_total`; that each histogram has
/// `_bucket` samples with ascending `le` bounds, cumulative counts, a last `+Inf` bucket equal to
/// its `_count`, and a `_sum`; and that no sample (name and labels) appears twice.
struct PrometheusExposition {
    struct Sample {
        var name: String
        var labels: [String: String]
        var value: Double
    }

    struct Family {
        var type: String
        var help: String
        var samples: [Sample] = []
    }

    struct FormatError: Error, CustomStringConvertible {
        var line: Int
        var message: String
        var description: String { "line \(line): \(message)" }
    }

    private(set) var families: [String: Family] = [:]

    init(parsing text: String) throws {
        guard text.isEmpty || text.hasSuffix("\n") else { throw FormatError(line: 0, message: "no final line feed") }
        var helps: [String: String] = [:]
        var seen: Set<String> = []
        for (offset, line) in text.split(separator: "\n", omittingEmptySubsequences: false).dropLast().enumerated() {
            let number = offset + 1
            if line.isEmpty { continue }
            if line.hasPrefix("#") {
                let parts = line.split(separator: " ", maxSplits: 3, omittingEmptySubsequences: false)
                guard parts.count >= 3, parts[0] == "#" else { continue }
                let name = String(parts[2])
                guard Self.isMetricName(name) else { throw FormatError(line: number, message: "bad name \(name)") }
                switch parts[1] {
                case "HELP":
                    guard helps[name] == nil else { throw FormatError(line: number, message: "second HELP of \(name)") }
                    helps[name] = parts.count > 3 ? String(parts[3]) : ""
                case "TYPE":
                    guard parts.count == 4, ["counter", "gauge", "histogram", "summary", "untyped"].contains(parts[3])
                    else { throw FormatError(line: number, message: "bad TYPE line") }
                    guard families[name] == nil else {
                        throw FormatError(line: number, message: "second TYPE of \(name)")
                    }
                    guard let help = helps[name] else {
                        throw FormatError(line: number, message: "TYPE of \(name) before its HELP")
                    }
                    if parts[3] == "counter", !name.hasSuffix("_total") {
                        throw FormatError(line: number, message: "counter \(name) does not end in _total")
                    }
                    families[name] = Family(type: String(parts[3]), help: help)
                default:
                    continue
                }
                continue
            }
            let sample = try Self.sample(String(line), line: number)
            let key = sample.name + "{" + sample.labels.sorted { $0.key < $1.key }.map { "\($0)=\($1)" }.joined() + "}"
            guard seen.insert(key).inserted else { throw FormatError(line: number, message: "duplicate \(key)") }
            guard let family = familyName(of: sample.name) else {
                throw FormatError(line: number, message: "sample \(sample.name) of no declared family")
            }
            families[family]!.samples.append(sample)
        }
        for (name, family) in families where family.type == "histogram" {
            try Self.checkHistogram(name, family)
        }
    }

    /// The family a sample's name belongs to: its own, or a histogram's for its suffixes.
    private func familyName(of sample: String) -> String? {
        if let family = families[sample], family.type != "histogram" { return sample }
        for suffix in ["_bucket", "_sum", "_count"] where sample.hasSuffix(suffix) {
            let base = String(sample.dropLast(suffix.count))
            if families[base]?.type == "histogram" { return base }
        }
        return nil
    }

    private static func checkHistogram(_ name: String, _ family: Family) throws {
        let buckets = family.samples.filter { $0.name == name + "_bucket" }
        guard !buckets.isEmpty else { throw FormatError(line: 0, message: "\(name) has no buckets") }
        var previousBound = -Double.infinity
        var previousCount = 0.0
        for bucket in buckets {
            guard let text = bucket.labels["le"], let bound = parseValue(text) else {
                throw FormatError(line: 0, message: "a bucket of \(name) has no le")
            }
            guard bound > previousBound else { throw FormatError(line: 0, message: "\(name)'s bounds do not ascend") }
            guard bucket.value >= previousCount else {
                throw FormatError(line: 0, message: "\(name)'s buckets are not cumulative")
            }
            (previousBound, previousCount) = (bound, bucket.value)
        }
        guard previousBound == .infinity else { throw FormatError(line: 0, message: "\(name) has no +Inf bucket") }
        guard let count = family.samples.first(where: { $0.name == name + "_count" }),
            family.samples.contains(where: { $0.name == name + "_sum" })
        else { throw FormatError(line: 0, message: "\(name) lacks _sum or _count") }
        guard count.value == previousCount else {
            throw FormatError(line: 0, message: "\(name)_count \(count.value) is not its +Inf bucket \(previousCount)")
        }
    }

    /// The value of the sample `name` with exactly `labels`.
    func value(_ name: String, _ labels: [String: String] = [:]) -> Double? {
        for family in families.values {
            if let sample = family.samples.first(where: { $0.name == name && $0.labels == labels }) {
                return sample.value
            }
        }
        return nil
    }

    /// A histogram's buckets: (bound, cumulative count), ascending.
    func buckets(_ name: String) -> [(bound: Double, count: Double)] {
        (families[name]?.samples ?? []).filter { $0.name == name + "_bucket" }.compactMap { sample in
            sample.labels["le"].flatMap(Self.parseValue).map { ($0, sample.value) }
        }
    }

    // MARK: - Lines

    static func isMetricName(_ name: String) -> Bool {
        func letter(_ c: Unicode.Scalar) -> Bool {
            c == "_" || c == ":" || ("a"..."z").contains(c) || ("A"..."Z").contains(c)
        }
        guard let first = name.unicodeScalars.first, letter(first) else { return false }
        return name.unicodeScalars.allSatisfy { letter($0) || ("0"..."9").contains($0) }
    }

    static func parseValue(_ text: String) -> Double? {
        switch text {
        case "+Inf": .infinity
        case "-Inf": -.infinity
        case "NaN": .nan
        default: Double(text)
        }
    }

    private static func sample(_ line: String, line number: Int) throws -> Sample {
        var rest = Substring(line)
        let name = String(rest.prefix { $0 != "{" && $0 != " " })
        guard isMetricName(name) else { throw FormatError(line: number, message: "bad sample name in \(line)") }
        rest = rest.dropFirst(name.count)
        var labels: [String: String] = [:]
        if rest.first == "{" {
            rest = rest.dropFirst()
            while rest.first != "}" {
                let label = String(rest.prefix { $0 != "=" })
                guard isMetricName(label), !label.contains(":") else {
                    throw FormatError(line: number, message: "bad label name in \(line)")
                }
                rest = rest.dropFirst(label.count)
                guard rest.hasPrefix("=\"") else { throw FormatError(line: number, message: "no label value") }
                rest = rest.dropFirst(2)
                var value = ""
                while true {
                    guard let character = rest.popFirst() else {
                        throw FormatError(line: number, message: "unterminated label value")
                    }
                    if character == "\"" { break }
                    if character == "\\" {
                        switch rest.popFirst() {
                        case "\\": value.append("\\")
                        case "\"": value.append("\"")
                        case "n": value.append("\n")
                        default: throw FormatError(line: number, message: "bad escape in a label value")
                        }
                    } else {
                        value.append(character)
                    }
                }
                guard labels.updateValue(value, forKey: label) == nil else {
                    throw FormatError(line: number, message: "label \(label) twice")
                }
                if rest.first == "," { rest = rest.dropFirst() }
            }
            rest = rest.dropFirst()
        }
        guard rest.first == " " else { throw FormatError(line: number, message: "no space before the value") }
        let fields = rest.dropFirst().split(separator: " ")
        guard (1...2).contains(fields.count), let value = parseValue(String(fields[0])) else {
            throw FormatError(line: number, message: "bad value in \(line)")
        }
        if fields.count == 2, Int64(fields[1]) == nil {
            throw FormatError(line: number, message: "bad timestamp in \(line)")
        }
        return Sample(name: name, labels: labels, value: value)
    }
}
