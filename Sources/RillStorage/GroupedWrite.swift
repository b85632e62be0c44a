/// A write waiting to be run in a group commit (`EnvironmentCore.writeGrouped`).
///
/// `@unchecked Sendable`: after it is queued, only the writer thread touches it until it is
/// settled; its caller reads it only after the writer's job for it has finished.
final class GroupedWrite: @unchecked Sendable {
    /// The write's body, storing its own result; nil once settled.
    private(set) var body: ((WriteTransaction) throws -> Void)?
    private(set) var error: (any Error)?
    private(set) var isSettled = false

    init(_ body: @escaping (WriteTransaction) throws -> Void) {
        self.body = body
    }

    /// Ends the write: committed when `error` is nil. Drops the body.
    func settle(error: (any Error)?) {
        self.error = error
        body = nil
        isSettled = true
    }
}
