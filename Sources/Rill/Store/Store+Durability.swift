import RillStorage
import Synchronization

extension Store {
    /// The last commit of `snapshot` that an observer may be told of: the head of the log, once
    /// it is on disk.
    ///
    /// Every commit made with full durability is on disk before any reader sees it. When the
    /// snapshot holds commits made without a flush (`.relaxed`, `.unsynced`, in this process or
    /// another), the file is flushed first, once for all of them; a flush that fails throws, and
    /// nothing past the last flushed commit may be told.
    ///
    /// - Throws: `.diskFull` (a failed flush), `.corruptStore`.
    package func observableHead(in snapshot: StoreSnapshot) throws -> UInt64 {
        let head = try log.head(in: snapshot)
        guard head > flushedThrough.load(ordering: .acquiring), try log.firstUnflushed(in: snapshot) != nil else {
            return head
        }
        do {
            try environment.flushFile()
        } catch {
            throw Self.translate(error, directory: directory)
        }
        // Sequence numbers only grow while the file is open: what this flush covered stays covered.
        flushedThrough.max(head, ordering: .releasing)
        return head
    }

    /// Write transactions this process has committed to the store's file, by any of its handles:
    /// under `.full` durability, flushes of the disk. Concurrent saves share one when they are
    /// grouped (group commit), so that saves made ÷ this count is how many a flush carried.
    package var writeTransactionsCommitted: UInt64 { environment.committedWriteTransactions }
}
