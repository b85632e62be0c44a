import CLMDB

extension Environment {
    /// Reads LMDB's list of free pages (its free-page database, `FREE_DBI`, handle 0) from end to
    /// end, in a read transaction of its own, and returns how many pages it lists.
    ///
    /// No read of the named databases meets this list, but every write transaction takes pages
    /// from it: with its pages damaged, each read of the store succeeds and each write fails
    /// (`MDB_CORRUPTED`). Each entry is a commit's transaction id (8 bytes) and the pages it freed,
    /// as LMDB writes them (`MDB_IDL`): a count, then that many page numbers, each 8 bytes; a page
    /// number must name a page of the file past the two meta pages.
    ///
    /// A read that fails marks LMDB's transaction as failed; it is reset before any other read
    /// renews it, so the failure stays with this walk.
    ///
    /// - Throws: LMDB's error when it cannot read the list's pages (`MDB_CORRUPTED` for a page of
    ///   another kind than the list's), or `LMDBError.corrupted` with a message naming the entry
    ///   when an entry is not such a list.
    package func countFreePages() throws -> Int {
        try read { txn in
            // The newest commit's last page: the pages of the snapshot read are no later.
            var info = MDB_envinfo()
            try check(mdb_env_info(mdb_txn_env(txn.pointer), &info), "mdb_env_info")
            let lastPage = UInt64(info.me_last_pgno)
            let free = Database(handle: 0, name: "the list of free pages")
            var pages = 0
            try txn.withCursor(free) { cursor in
                var entry = try cursor.first()
                while let current = entry {
                    pages += try Self.freedPageCount(
                        key: current.key, value: current.value, lastPage: lastPage)
                    entry = try cursor.next()
                }
            }
            return pages
        }
    }

    /// The number of pages an entry of the free-page list names, each checked to be a page of the file.
    private static func freedPageCount(
        key: UnsafeRawBufferPointer, value: UnsafeRawBufferPointer, lastPage: UInt64
    ) throws -> Int {
        let word = MemoryLayout<UInt64>.size
        guard key.count == word else {
            throw damaged("an entry of the list of free pages has a key of \(key.count) bytes, not a transaction id")
        }
        let transaction = key.loadUnaligned(as: UInt64.self)
        guard value.count >= word, value.count % word == 0 else {
            throw damaged(
                "the free pages of transaction \(transaction) are \(value.count) bytes, not a list of page numbers")
        }
        let count = value.loadUnaligned(as: UInt64.self)
        guard count == UInt64(value.count / word - 1) else {
            throw damaged(
                "the free pages of transaction \(transaction) are said to be \(count) but \(value.count / word - 1) "
                    + "are listed")
        }
        for index in 1..<(value.count / word) {
            let page = value.loadUnaligned(fromByteOffset: index * word, as: UInt64.self)
            guard page >= 2, page <= lastPage else {
                throw damaged(
                    "transaction \(transaction) freed page \(page), which is not a page of the file's data "
                        + "(2…\(lastPage))")
            }
        }
        return Int(count)
    }

    private static func damaged(_ message: String) -> LMDBError {
        LMDBError(code: MDB_CORRUPTED, message: message)
    }
}
