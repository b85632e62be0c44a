import CLMDB
import RillLocks

extension EnvironmentCore {
    /// Like `write`, but `body` may share its transaction, and so its commit and its flush, with
    /// the other grouped writes queued meanwhile (see `run(_:)`).
    func writeGrouped<R>(_ body: (WriteTransaction) throws -> R) throws -> R {
        guard !isReadOnly else { throw readOnlyError }
        return try withoutActuallyEscaping(body) { body in
            // The caller stays blocked until its write is settled, and settling drops the
            // closure: it never outlives `withoutActuallyEscaping`.
            let result = UncheckedBox<R?>(nil)
            let write = GroupedWrite { transaction in result.value = try body(transaction) }
            groupCommits.append(write)
            // The writer runs jobs in order, and each job runs groups from the front of the
            // queue until its own write is settled: usually by an earlier job's group, which took
            // every write queued by then. The caller waits about a group's time: the jobs of
            // writes settled by earlier groups are short whatever a group takes, so the last
            // job's length would have a caller spin through a group's flushes.
            try writer.runAndWait(
                { while !write.isSettled { runNextGroup() } }, expected: groupCommits.lastGroupNanoseconds)
            if let error = write.error { throw error }
            return result.value!
        }
    }

    /// Runs the next group of the queue.
    private func runNextGroup() {
        let group = groupCommits.take()
        let start = monotonicNanoseconds()
        run(group)
        groupCommits.finished(size: group.count, nanoseconds: monotonicNanoseconds() - start)
    }

    /// Runs `taken` in one write transaction, and the writes queued while it is written (up to
    /// `GroupCommitQueue.maxGroupSize` in all): one commit (one flush of the data, one of the
    /// meta page) makes every write of the group durable. Each write keeps its own result, and a
    /// store's save its own log entry.
    ///
    /// A lone write runs as `write` runs it. When a body throws, the writes before it have
    /// written into the shared transaction, and so may the body itself: the transaction is
    /// aborted, the writes before it run again as a group (they meet the same store as before),
    /// the one that threw runs alone, so that it fails alone and with the error it would have
    /// had alone, and the writes after it go back to the front of the queue. When the shared
    /// commit fills the map, each write of the group runs again alone, growing the map as needed.
    ///
    /// The writes share the transaction itself rather than each having a nested one (an LMDB
    /// child transaction) because a nested transaction allocates and frees a dirty-page list of
    /// 2 MiB: in a process whose large blocks are mapped (the daemon's), that is an `mmap` and
    /// a `munmap` a write, which `rill-bench serve` measured as most of the writer thread's time.
    private func run(_ taken: [GroupedWrite]) {
        guard taken.count > 1 else {
            if let write = taken.first { runAlone(write) }
            return
        }
        var group = taken
        let txn: OpaquePointer
        do {
            txn = try begin(readOnly: false)
        } catch {
            for write in group { write.settle(error: error) }
            return
        }
        var opened: [String: Database] = [:]
        var position = 0
        while position < group.count {
            let write = group[position]
            let transaction = WriteTransaction(pointer: txn, maxKeySize: maxKeySize) { name in
                self.databases.withLock { $0[name] } ?? opened[name]
            }
            do {
                try write.body!(transaction)
            } catch {
                mdb_txn_abort(txn)
                gate.unlockShared()
                run(Array(group[..<position]))
                runAlone(write)
                groupCommits.putBack(group[(position + 1)...])
                return
            }
            opened.merge(transaction.state.openedDatabases) { known, _ in known }
            position += 1
            // The writes queued while these were written join the transaction: they would
            // otherwise wait for this group's flush, then for their own.
            if position == group.count {
                group += groupCommits.takeQueued(limit: GroupCommitQueue.maxGroupSize - group.count)
            }
        }
        let transactionID = Int(mdb_txn_id(txn))
        let rc = commitWrite(txn)
        gate.unlockShared()
        guard rc != MDB_MAP_FULL else {
            for write in group { runAlone(write) }
            return
        }
        let failure = Self.error { try checkCommit(rc, transaction: transactionID) }
        if failure == nil {
            adopt(opened)
            clearStaleReadersIfGrown()
        }
        for write in group { write.settle(error: failure) }
    }

    /// Runs `write` in a transaction of its own, as `write` runs a body, and settles it.
    private func runAlone(_ write: GroupedWrite) {
        write.settle(error: Self.error { try runTransaction(write.body!) })
    }

    /// The error `body` throws, nil when it returns.
    private static func error(of body: () throws -> Void) -> (any Error)? {
        do {
            try body()
            return nil
        } catch {
            return error
        }
    }
}
