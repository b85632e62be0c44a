import Foundation

/// The changes of one save, ready to be written, possibly still being prepared.
///
/// A large save is encoded chunk by chunk on the caller's thread while the writer thread already
/// stores the chunks that are ready, so encoding and writing overlap. The writer takes chunks in
/// order and waits for each; an encoding failure reaches the writer as an error, which aborts the
/// transaction, so nothing is written.
package final class PreparedBatch: @unchecked Sendable {
    // `chunks` and `failure` are only touched with `condition` locked.
    private let condition = NSCondition()
    private var chunks: [[PreparedChange]?]
    private var failure: (any Error)?

    /// The number of chunks.
    package var chunkCount: Int { chunks.count }

    /// A batch whose changes are all ready.
    package init(_ changes: [PreparedChange]) {
        chunks = [changes]
    }

    /// A batch of `chunkCount` chunks, to be published one by one.
    package init(chunkCount: Int) {
        chunks = Array(repeating: nil, count: chunkCount)
    }

    /// Makes chunk `index` available.
    package func publish(_ index: Int, _ changes: [PreparedChange]) {
        condition.lock()
        chunks[index] = changes
        condition.broadcast()
        condition.unlock()
    }

    /// Ends preparation with an error: whoever waits for a missing chunk receives it.
    package func fail(_ error: any Error) {
        condition.lock()
        if failure == nil { failure = error }
        condition.broadcast()
        condition.unlock()
    }

    /// Chunk `index`, waiting until it is published.
    ///
    /// - Throws: the preparation's error when it failed before publishing the chunk.
    package func chunk(_ index: Int) throws -> [PreparedChange] {
        condition.lock()
        defer { condition.unlock() }
        while chunks[index] == nil {
            if let failure { throw failure }
            condition.wait()
        }
        return chunks[index]!
    }
}
