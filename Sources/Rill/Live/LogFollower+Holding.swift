import Dispatch

extension LogFollower {
    /// Runs `body` while the follower's thread waits in a job, begun once it had applied every
    /// commit made before the call: the commits `body` saves are read only after it returns (for
    /// tests of a follower behind the log).
    func holding<R>(_ body: () throws -> R) rethrows -> R {
        let (started, release) = (DispatchSemaphore(value: 0), DispatchSemaphore(value: 0))
        schedule { _, _ in
            started.signal()
            release.wait()
            return nil
        }
        started.wait()
        defer { release.signal() }
        return try body()
    }
}
