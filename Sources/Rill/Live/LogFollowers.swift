import RillLocks

/// The followers of this process, one per store file, each alive while it has live queries.
enum LogFollowers {
    private static let followers = Lock<[StoreFileID: (follower: LogFollower, users: Int)]>([:])

    /// The follower of `store`'s file, started if needed; balance with `release`.
    static func retain(for store: Store) throws -> LogFollower {
        let id = store.fileID
        return try followers.withLock { table in
            if let entry = table[id] {
                table[id] = (entry.follower, entry.users + 1)
                return entry.follower
            }
            let follower = try LogFollower(store: store)
            table[id] = (follower, 1)
            return follower
        }
    }

    static func release(_ follower: LogFollower) {
        let stop = followers.withLock { table -> Bool in
            guard let entry = table[follower.fileID], entry.follower === follower else { return false }
            if entry.users > 1 {
                table[follower.fileID] = (follower, entry.users - 1)
                return false
            }
            table[follower.fileID] = nil
            return true
        }
        if stop { follower.stop() }
    }

    /// The follower of the store file `id`, when one runs; neither starts nor retains one.
    static func running(for id: StoreFileID) -> LogFollower? {
        followers.withLock { $0[id]?.follower }
    }

}
