import Dispatch
import Synchronization

/// A publication whose steps are closures: for the rarer publications (a query that stopped,
/// a record query's events).
final class ClosurePublication: LivePublication {
    private let onPublish: () -> Void
    private let onDeliver: () -> Void

    init(publish: @escaping () -> Void = {}, deliver: @escaping () -> Void) {
        onPublish = publish
        onDeliver = deliver
    }

    override func publish() { onPublish() }
    override func deliver() { onDeliver() }
}
