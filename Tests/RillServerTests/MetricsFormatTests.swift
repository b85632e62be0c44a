import Foundation
import Rill
import RillService
import RillTestSupport
import RillWorkloads
import Testing

@testable import RillServer

/// The pieces of `/metrics` and of the request log, in the test's process: histograms against
/// the observations made, the text against the test's parser, request ids and JSON escaping.
@Suite struct MetricsFormatTests {
    @Test func histogramBucketsCountTheObservationsAtMostTheirBound() throws {
        let seed = UInt64.random(in: 0...UInt64(UInt32.max))
        print("MetricsFormatTests.histogramBucketsCountTheObservationsAtMostTheirBound seed \(seed)")
        var random = SeededGenerator(seed: seed)
        let histogram = MetricHistogram(bounds: [1, 5, 10, 100], scale: 0.5)
        let values = (0..<200).map { _ in UInt64.random(in: 0...150, using: &random) }
        for value in values { histogram.observe(value) }
        var text = PrometheusText()
        text.histogram("test_values", "Values \\ with a backslash\nand a line feed.", histogram)
        text.counter("test_things_total", "Things.", [([("kind", "a \"quoted\"\\ \n one")], 3), ([("kind", "b")], 4)])
        text.gauge("test_level", "A level.", 0.25)
        let exposition = try PrometheusExposition(parsing: text.text)
        let buckets = exposition.buckets("test_values")
        #expect(buckets.map(\.bound) == [0.5, 2.5, 5, 50, .infinity])
        for bucket in buckets {
            let expected = values.filter { Double($0) * 0.5 <= bucket.bound }.count
            #expect(bucket.count == Double(expected), "le=\(bucket.bound), seed \(seed)")
        }
        #expect(exposition.value("test_values_count") == 200)
        #expect(exposition.value("test_values_sum") == Double(values.reduce(0, +)) * 0.5)
        #expect(exposition.value("test_things_total", ["kind": "a \"quoted\"\\ \n one"]) == 3)
        #expect(exposition.value("test_things_total", ["kind": "b"]) == 4)
        #expect(exposition.value("test_level") == 0.25)
        #expect(exposition.families["test_values"]?.help == "Values \\\\ with a backslash\\nand a line feed.")
    }

    @Test func theParserRefusesWhatTheFormatForbids() {
        let bad = [
            "x_total 1\n",  // no TYPE
            "# HELP x_total X.\n# TYPE x_total counter\nx_total 1",  // no final line feed
            "# HELP x X.\n# TYPE x counter\nx 1\n",  // a counter not named _total
            "# HELP h H.\n# TYPE h histogram\nh_bucket{le=\"1\"} 2\nh_bucket{le=\"+Inf\"} 1\nh_sum 1\nh_count 1\n",
            "# HELP h H.\n# TYPE h histogram\nh_bucket{le=\"1\"} 1\nh_sum 1\nh_count 1\n",  // no +Inf
            "# HELP g G.\n# TYPE g gauge\ng 1\ng 2\n",  // a sample twice
            "# HELP g G.\n# TYPE g gauge\ng{a=\"x} 1\n",  // an unterminated label
        ]
        for text in bad {
            #expect(throws: PrometheusExposition.FormatError.self, "\(text)") {
                try PrometheusExposition(parsing: text)
            }
        }
    }

    @Test func theExpositionOfAFreshDaemonParses() throws {
        let directory = TemporaryDirectory()
        let path = try directory.counterStore(records: 2)
        let container = try ModelContainer(
            for: Counter.self, configurations: ModelConfiguration(url: URL(fileURLWithPath: path)))
        let metrics = ServerMetrics()
        metrics.countRejection(status: 404, reason: "notFound")
        let exposition = try PrometheusExposition(parsing: try metrics.exposition(of: container.store))
        #expect(exposition.value("rill_log_head") == 1)
        #expect(exposition.value("rill_requests_rejected_total", ["status": "404", "reason": "notFound"]) == 1)
        for name in [
            "rill_saves_total", "rill_commits_total", "rill_live_queries", "rill_subscribers",
            "rill_follower_lag_commits", "rill_follower_lag_milliseconds", "rill_connections_open",
        ] {
            #expect(exposition.value(name) == 0, "\(name)")
        }
        // Counted by the process's environment of the file, made by the writes that made it.
        #expect(exposition.families["rill_write_transactions_total"]?.type == "counter")
    }

    @Test func requestIDsAreKeptWhenSaneAndMadeOtherwise() {
        for sane in ["a", "0123456789abcdef", "proxy/1:2.3-4_5+6=7@8", String(repeating: "z", count: 128)] {
            #expect(RequestID.isSane(sane), "\(sane)")
            #expect(RequestID.id(given: sane) == sane)
        }
        for insane in ["", "a b", "é", "a\"b", "a\nb", String(repeating: "z", count: 129)] {
            #expect(!RequestID.isSane(insane), "\(insane)")
            let made = RequestID.id(given: insane)
            #expect(made.count == 16 && made.allSatisfy(\.isHexDigit), "\(made)")
        }
        #expect(RequestID.make() != RequestID.make())
    }

    @Test func madeRequestIDsAreDistinctHexOfSixteenDigits() {
        let made = (0..<20_000).map { _ in RequestID.make() }
        #expect(Set(made).count == made.count)
        #expect(made.allSatisfy { $0.utf8.count == 16 && $0.allSatisfy { "0123456789abcdef".contains($0) } })
        #expect(RequestID.hex(0) == "0000000000000000")
        #expect(RequestID.hex(0x0123_4567_89AB_CDEF) == "0123456789abcdef")
        #expect(RequestID.hex(.max) == "ffffffffffffffff")
        // Consecutive counts differ in about half their bits once mixed.
        let flipped = (0..<1_000 as Range<UInt64>).map { (RequestID.mix($0) ^ RequestID.mix($0 + 1)).nonzeroBitCount }
        #expect(Double(flipped.reduce(0, +)) / Double(flipped.count) > 24)
    }

    @Test func jsonLinesParseWhateverTheMessageHolds() throws {
        let message = "quote \" backslash \\ line\nfeed tab\t bell \u{07} del \u{7F} é ✓"
        let context = LogContext(
            requestID: "id-1", client: "[::1]:80", method: "GET", path: "/v1/\"odd\"", status: 404, milliseconds: 1.25)
        let line = Log.line(.warning, message, context, format: .json, date: Date(timeIntervalSince1970: 0))
        #expect(line.hasSuffix("}\n") && line.filter { $0 == "\n" }.count == 1, "one line: \(line)")
        let start = try #require(line.firstIndex(of: "{"))
        let object = try #require(
            try JSONSerialization.jsonObject(with: Data(line[start...].utf8)) as? [String: Any])
        #expect(object["message"] as? String == message)
        #expect(object["time"] as? String == "1970-01-01T00:00:00.000Z")
        #expect(object["level"] as? String == "warning")
        #expect(object["requestId"] as? String == "id-1")
        #expect(object["client"] as? String == "[::1]:80")
        #expect(object["path"] as? String == "/v1/\"odd\"")
        #expect(object["status"] as? Int == 404)
        #expect(object["milliseconds"] as? Double == 1.25)
        let text = Log.line(.info, "a\nb", context, format: .text, date: Date(timeIntervalSince1970: 0))
        #expect(text.hasSuffix("[id-1 [::1]:80] a b\n"), "\(text)")
    }
}

/// The follower's lag, made to happen: an observer holds the follower thread on one commit while
/// the test makes more; the lag is then exactly the commits made since the last one applied.
@Suite struct FollowerLagTests {
    @Test func lagCountsTheCommitsTheFollowerHasYetToApply() throws {
        let seed = UInt64.random(in: 0...UInt64(UInt32.max))
        print("FollowerLagTests.lagCountsTheCommitsTheFollowerHasYetToApply seed \(seed)")
        var random = SeededGenerator(seed: seed)
        let directory = TemporaryDirectory()
        let path = try directory.counterStore(records: 2)
        let container = try ModelContainer(
            for: Counter.self, configurations: ModelConfiguration(url: URL(fileURLWithPath: path)))
        let store = container.store
        #expect(try store.liveFollowerStatus().lagCommits == 0, "no follower, no lag")

        let held = DispatchSemaphore(value: 0)
        let release = DispatchSemaphore(value: 0)
        let holdAt = try store.head() + 1
        let query = try QueryRequest(parameter: "Counter", body: []).query
        let live = try RecordLiveQuery(query, store: store) { event in
            // On the follower's thread: it applies nothing more until released.
            if case .change(let change) = event, change.sequence == holdAt {
                held.signal()
                release.wait()
            }
        }
        let context = ModelContext(container)
        context.insert(Counter(id: 100, value: 1))
        try context.save()
        #expect(held.wait(timeout: .now() + 30) == .success, "the follower delivers commit \(holdAt)")

        let more = Int.random(in: 1...10, using: &random)
        for index in 0..<more {
            context.insert(Counter(id: 200 + index, value: 1))
            try context.save()
        }
        let behind = try store.liveFollowerStatus(now: Date().addingTimeInterval(10))
        #expect(behind.liveQueries == 1)
        #expect(behind.observableHead == holdAt + UInt64(more))
        #expect(behind.lagCommits == UInt64(more + 1), "commit \(holdAt) and the \(more) after it; seed \(seed)")
        #expect(behind.lagSeconds >= 10, "measured from commit \(holdAt), made before now + 10 s")
        let metrics = try PrometheusExposition(parsing: try ServerMetrics().exposition(of: store))
        #expect(metrics.value("rill_follower_lag_commits") == Double(more + 1))
        #expect(metrics.value("rill_live_queries") == 1)

        release.signal()
        let deadline = Date().addingTimeInterval(30)
        var status = try store.liveFollowerStatus()
        while status.lagCommits > 0, Date() < deadline {
            usleep(10_000)
            status = try store.liveFollowerStatus()
        }
        #expect(status.lagCommits == 0, "the follower catches up once released")
        #expect(status.lagSeconds == 0)
        withExtendedLifetime(live) {}
    }
}
