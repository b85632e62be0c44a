import RillStorage

/// Which commits an observer may be told of: only those on disk.
///
/// LMDB shows a commit to readers once its meta page is written. With full durability that write
/// goes through a descriptor opened with `O_DSYNC`, and the reader table's transaction number
/// moves on only after it returned (`mdb_env_write_meta`): a reader never sees a commit that is
/// not on disk. With `.relaxed` (`MDB_NOMETASYNC`) or `.unsynced` (`MDB_NOSYNC`) the meta page is
/// written without a flush, and readers see the commit at once: a power cut can then undo a
/// commit that a reader saw, and the next commit would take its sequence number.
///
/// So a commit made without a flush marks the log: the first such commit not yet followed by a
/// flushed one is recorded in `meta` (`log-unflushed`, in the commit's own transaction), and the
/// next commit made with full durability, whose flush covers every earlier write to the file,
/// clears the mark. An observer that finds the mark flushes the file itself (`fdatasync`, which
/// any process may do, even one that only reads) before it tells of the commits its snapshot
/// holds (`Store.observableHead(in:)`).
extension Log {
    static let unflushedKey = Array("log-unflushed".utf8)

    /// Keeps the mark of unflushed commits in the transaction of commit `sequence`: set when the
    /// commit is not flushed and no earlier unflushed commit is marked, cleared when it is flushed.
    func noteFlush(of sequence: UInt64, flushed: Bool, in txn: WriteTransaction) throws {
        let marked = try txn.get(Self.unflushedKey, in: meta) != nil
        if flushed {
            if marked { _ = try txn.delete(Self.unflushedKey, in: meta) }
        } else if !marked {
            try txn.put(withUnsafeBytes(of: sequence.bigEndian) { Array($0) }, for: Self.unflushedKey, in: meta)
        }
    }

    /// The first commit `snapshot` sees that may not be on disk; nil when every commit it sees is.
    package func firstUnflushed(in snapshot: StoreSnapshot) throws -> UInt64? {
        guard let raw = try snapshot.transaction.get(Self.unflushedKey, in: meta) else { return nil }
        guard raw.count == 8 else {
            throw RillError(.corruptStore, "the unflushed-commit mark of \(directory) is \(raw.count) bytes, not 8")
        }
        return raw.reduce(UInt64(0)) { $0 << 8 | UInt64($1) }
    }
}
