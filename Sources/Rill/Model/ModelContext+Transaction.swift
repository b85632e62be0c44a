import Foundation
import RillLocks

extension ModelContext {
    /// Runs `block`, then saves every staged change in one atomic commit, as SwiftData's
    /// `transaction(block:)` does.
    ///
    /// When `block` throws, nothing is saved: the context's staged changes go back to what they
    /// were when `block` started (the changes it staged are discarded, earlier ones stay), and
    /// the error is rethrown. When the save fails, its changes stay staged, as with ``save()``.
    /// With ``autosaveEnabled``, the block's changes are saved by this save, never in part by an
    /// autosave.
    ///
    /// For example:
    ///
    /// ```swift
    /// try context.transaction {
    ///     context.delete(oldBook)
    ///     context.insert(newBook)
    /// }
    /// ```
    ///
    /// - Returns: the sequence number of the commit, or nil when nothing was written.
    @discardableResult
    public func transaction(block: () throws -> Void) throws -> UInt64? {
        // Counted as running, so that an autosave leaves the block's changes to its save.
        let before = core.state.withLock { state in
            state.transactions += 1
            return state.staged
        }
        do {
            try block()
        } catch {
            staging { state in
                state.transactions -= 1
                state.staged = before
            }
            throw error
        }
        return try save(endingTransaction: true)
    }
}
