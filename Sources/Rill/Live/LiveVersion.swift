import Synchronization

/// Keeps alive what a live query let go of while a snapshot that may show it lives: rows, and
/// the row list's chunks.
///
/// A query has a current version; rows and chunks it stops using go into the current version.
/// A snapshot holds the version that was current when it was taken, and each version holds the
/// next, so a snapshot keeps everything let go of since it was taken — exactly what it may
/// still show that the query no longer holds.
final class LiveVersion: @unchecked Sendable {
    // Sendable: written only by the follower thread while it is the current version; read by no
    // one else (released on any thread, once, by the last owner).
    var retired: [LiveEntry] = []
    private var chunks: [UnsafeMutablePointer<RowList.Slot>] = []
    var next: LiveVersion?

    init() {}

    /// Frees `chunk` when this version goes.
    func retire(_ chunk: UnsafeMutablePointer<RowList.Slot>) { chunks.append(chunk) }

    deinit {
        ChunkPool.give(chunks)
        // Release a long chain iteratively, not by recursion.
        var link = next
        next = nil
        while var node = link {
            link = nil
            guard isKnownUniquelyReferenced(&node) else { break }
            link = node.next
            node.next = nil
        }
    }
}
