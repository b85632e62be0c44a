import Foundation

extension ModelContext {
    /// Runs `block`, then saves every staged change in one atomic commit, as SwiftData's
    /// `transaction(block:)` does.
    ///
    /// When `block` throws, nothing is saved: the context's staged changes go back to what they
    /// were when `block` started (the changes it staged are discarded, earlier ones stay), and
    /// the error is rethrown. When the save fails, its changes stay staged, as with ``save()``.
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
        let before = stagedSnapshot()
        do {
            try block()
        } catch {
            restoreStaged(before)
            throw error
        }
        return try save()
    }
}
