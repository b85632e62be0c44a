import Foundation

/// An observer fed through an `AsyncStream`.
final class StreamSink<T: PersistentModel>: LiveSink, @unchecked Sendable {
    let continuation: AsyncStream<ResultsChange<T>>.Continuation

    init(_ continuation: AsyncStream<ResultsChange<T>>.Continuation) { self.continuation = continuation }

    override func post(_ change: PendingChange) { continuation.yield(change.results(T.self)) }
    override func finish() { continuation.finish() }
}
