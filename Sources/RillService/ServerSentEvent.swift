import Rill

/// One event of a subscription's stream (Documentation/Protocol.md, "Subscriptions"): `results`,
/// `change`, `reset`, `progress` or `error`, its id the commit it reflects, its data one line of
/// JSON.
///
/// The daemon frames the events it sends with it, and the client reads them back into it.
package struct ServerSentEvent: Sendable, Equatable {
    /// The event's type (`event:`); `message` when the stream does not name one.
    package var name: String
    /// The commit sequence it reflects (`id:`), the `Last-Event-ID` to resume after it.
    package var id: String?
    /// The event's data: lines joined by newlines.
    package var data: String

    /// An event named `name` with `id` and `data`.
    package init(name: String = "message", id: String? = nil, data: String = "") {
        self.name = name
        self.id = id
        self.data = data
    }

    /// The first bytes of a stream: how long a browser waits before it reconnects (1 s).
    package static let streamStart = "retry: 1000\n\n"

    /// A comment sent after a while without events, so that proxies and clients see the stream alive.
    package static let keepAlive = ": keep-alive\n\n"

    /// The event as it is sent: its `event:`, `id:` and `data:` lines, then a blank line. The data
    /// is one line (JSON escapes its newlines).
    package var framed: String {
        "event: \(name)\n" + (id.map { "id: \($0)\n" } ?? "") + "data: \(data)\n\n"
    }

    // MARK: - The events of a subscription

    /// The query's results at commit `sequence`: `results`, or `reset` when they replace what a
    /// subscriber that fell behind (or resumed too far back) had.
    package static func results(_ rows: [QueryRow], sequence: UInt64, reset: Bool = false) -> ServerSentEvent {
        ServerSentEvent(
            name: reset ? "reset" : "results", id: String(sequence),
            data: RecordLiveQuery.resultsJSON(rows, sequence: sequence).jsonString())
    }

    /// The change a commit made to the results.
    package static func change(_ change: ResultsChange<QueryRow>) -> ServerSentEvent {
        ServerSentEvent(
            name: "change", id: String(change.sequence), data: RecordLiveQuery.changeJSON(change).jsonString())
    }

    /// The results the subscriber holds are those as of commit `sequence`: the commits since the
    /// last event left them as they were (Documentation/Protocol.md, "Progress").
    package static func progress(_ sequence: UInt64) -> ServerSentEvent {
        ServerSentEvent(
            name: "progress", id: String(sequence), data: RecordLiveQuery.progressJSON(sequence: sequence).jsonString())
    }

    /// The end of a subscription whose live query failed: the error's code and message.
    package static func failure(_ error: RillError) -> ServerSentEvent {
        ServerSentEvent(name: "error", data: ServiceError.json(code: error.code.description, message: error.message))
    }
}
