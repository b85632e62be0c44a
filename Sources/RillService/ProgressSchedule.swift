/// When a subscription tells its subscriber how far it has come while its results stay as they
/// are (Documentation/Protocol.md, "Progress"): the daemon's `progress` events and the
/// `{"seq":N}` lines of `rill watch --json`.
///
/// A pure state machine over the sequences sent and a clock the caller reads (nanoseconds of
/// uptime), so that its rules are tested without threads or sockets:
/// - once `interval` has passed since the last event sent (or the last look), and the log has
///   moved past the last sequence sent, a progress report is asked for — of the live query,
///   which reports the commit it reached only after telling of every change up to it;
/// - a sequence is sent only when it is past the last one sent: ids never go backwards, and a
///   report that comes after a later change is dropped.
///
/// For example, a stream's loop:
///
///     var schedule = ProgressSchedule(interval: 5, sequence: 42, now: now())
///     // … when `schedule.deadline` has passed without an event:
///     if schedule.shouldAsk(published: live.sequence, now: now()) { live.reportProgress() }
///     // … when the live query reports progress at `sequence`:
///     if schedule.send(sequence, at: now()) { write(ServerSentEvent.progress(sequence)) }
package struct ProgressSchedule: Sendable, Equatable {
    /// The interval of `rill serve`'s subscriptions and of `rill watch --json`, unless told
    /// otherwise: seconds, short beside a reconnect's usual wait, long beside a commit's time.
    package static let defaultSeconds = 5.0

    /// Seconds without an event after which progress is reported; nil: never.
    package let interval: Double?
    /// The sequence of the last event sent (or the one resumed after).
    package private(set) var sequence: UInt64
    /// When an event was last sent or progress last looked for.
    private var since: UInt64

    /// A schedule that has sent `sequence` (the initial results, or the commit resumed after) at
    /// `now`; it never reports progress when `interval` is nil or not above 0.
    package init(interval: Double?, sequence: UInt64, now: UInt64) {
        self.interval = interval.flatMap { $0 > 0 ? $0 : nil }
        self.sequence = sequence
        since = now
    }

    /// When to look next (``shouldAsk(published:now:)``), or nil when never.
    package var deadline: UInt64? {
        guard let interval else { return nil }
        let (sum, overflow) = since.addingReportingOverflow(UInt64(min(interval, 1e9) * 1e9))
        return overflow ? .max : sum
    }

    /// Whether to ask for a progress report at `now`, with the live query's results as of
    /// `published`: when the interval has passed and they are past the last sequence sent. A look
    /// once the interval has passed starts it again, asked or not, so that the next one comes an
    /// interval later.
    package mutating func shouldAsk(published: UInt64, now: UInt64) -> Bool {
        guard let deadline, now >= deadline else { return false }
        since = now
        return published > sequence
    }

    /// Records an event with id `sequence` sent at `now` (a change, a progress report), when it
    /// is past the last one sent; returns whether it is, that is whether it is to be sent.
    package mutating func send(_ sequence: UInt64, at now: UInt64) -> Bool {
        guard sequence > self.sequence else { return false }
        self.sequence = sequence
        since = now
        return true
    }

    /// Records results (or a reset) as of `sequence` sent at `now`: they are sent whatever the
    /// last sequence sent (they replace what the subscriber holds), and are never behind it.
    package mutating func restart(at sequence: UInt64, now: UInt64) {
        self.sequence = max(self.sequence, sequence)
        since = now
    }
}
