import Foundation
import RillHTTP
import RillLocks

#if canImport(Glibc)
    import Glibc
#endif

/// The well-behaved clients of the `hostile` suite, each on a keep-alive connection of its own
/// on the Unix socket, running on a thread until stopped: one repeats a query and times it,
/// checking every answer; the other saves now and then, so that subscribers have events.
final class HostileProbe: @unchecked Sendable {
    // Sendable: what the threads record is behind `state`; the rest is immutable.
    /// The query the probe repeats (URL-encoded), and how many rows it must answer.
    let target: String
    let expectedRows: Int
    private let socket: String
    private let state = Lock(State())
    private let finished = DispatchSemaphore(value: 0)

    private struct State {
        var stopping = false
        /// (When it started, seconds since the probe began; how long it took, in seconds.)
        var latencies: [(at: Double, seconds: Double)] = []
        var saveLatencies: [Double] = []
        var acknowledged: [AcknowledgedSave] = []
        var problems: [String] = []
    }

    init(socket: String, query: String, expectedRows: Int) {
        self.socket = socket
        self.target = "/v1/query?q=" + (query.addingPercentEncoding(withAllowedCharacters: .alphanumerics) ?? query)
        self.expectedRows = expectedRows
    }

    private let started = Date()

    /// Seconds since the probe was made.
    var now: Double { Date().timeIntervalSince(started) }

    /// Starts both clients: the query every `queryPause` seconds, a save of `payload` bytes every
    /// `savePause`.
    func start(queryPause: Double, savePause: Double, payload: Int) {
        Thread { [self] in
            defer { finished.signal() }
            runQueries(pause: queryPause)
        }.start()
        Thread { [self] in
            defer { finished.signal() }
            runSaves(pause: savePause, payload: payload)
        }.start()
    }

    private var stopping: Bool { state.withLock { $0.stopping } }

    private func problem(_ text: String) { state.withLock { $0.problems.append(text) } }

    private func runQueries(pause: Double) {
        guard let connection = try? HostileConnection(.unix(socket)) else {
            return problem("the probe could not connect")
        }
        while !stopping {
            let begin = now
            let response = connection.request("GET", target)
            let seconds = now - begin
            guard let response, response.status == 200 else {
                problem(
                    "the probe's query at \(String(format: "%.1f", begin)) s got \(response.map { "\($0.status) \($0.body.prefix(200))" } ?? "no answer")"
                )
                return
            }
            let rows = response.body.components(separatedBy: #""writer":"#).count - 1
            if rows != expectedRows {
                problem(
                    "the probe's query at \(String(format: "%.1f", begin)) s answered \(rows) rows, not \(expectedRows)"
                )
            }
            state.withLock { $0.latencies.append((begin, seconds)) }
            usleep(UInt32(pause * 1e6))
        }
    }

    private func runSaves(pause: Double, payload: Int) {
        guard let connection = try? HostileConnection(.unix(socket)) else {
            return problem("the probe's writer could not connect")
        }
        var number = 0
        let text = String(repeating: "p", count: payload)
        while !stopping {
            let id = "s\(number)"
            let body =
                #"[{"op":"insert","entity":"TortureItem","record":{"id":"\#(id)","writer":1,"number":\#(1_000_000 + number),"payload":"\#(text)"}}]"#
            let begin = now
            guard let response = connection.request("POST", "/v1/save", body: body), response.status == 200,
                let sequence = Self.sequence(response.body),
                let save = TortureWriter.acknowledged("ack \(sequence) insert \(id)")
            else {
                problem("save \(id) was not acknowledged")
                return
            }
            let seconds = now - begin
            state.withLock {
                $0.acknowledged.append(save)
                $0.saveLatencies.append(seconds)
            }
            number += 1
            usleep(UInt32(pause * 1e6))
        }
    }

    /// The `seq` of a save's answer, `{"seq":N}`.
    private static func sequence(_ body: String) -> UInt64? {
        guard let range = body.range(of: #""seq":"#) else { return nil }
        return UInt64(body[range.upperBound...].prefix { $0.isNumber })
    }

    /// Stops both clients and waits for them.
    func stop() {
        state.withLock { $0.stopping = true }
        finished.wait()
        finished.wait()
    }

    /// The query latencies of the requests started in `window` (seconds since the probe began).
    func latencies(in window: ClosedRange<Double>) -> [Double] {
        state.withLock { $0.latencies.filter { window.contains($0.at) }.map(\.seconds) }
    }

    var saveLatencies: [Double] { state.withLock { $0.saveLatencies } }
    var acknowledged: [AcknowledgedSave] { state.withLock { $0.acknowledged } }
    var problems: [String] { state.withLock { $0.problems } }

    /// The `fraction` quantile of `values` (nearest rank), 0 when there are none.
    static func quantile(_ values: [Double], _ fraction: Double) -> Double {
        guard !values.isEmpty else { return 0 }
        let sorted = values.sorted()
        return sorted[min(sorted.count - 1, Int((Double(sorted.count) * fraction).rounded(.up)) - 1)]
    }
}
