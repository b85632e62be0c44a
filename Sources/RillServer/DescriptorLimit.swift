#if canImport(Glibc)
    import Glibc
#endif

/// The process's limit on open descriptors.
package enum DescriptorLimit {
    /// Raises the soft limit to the hard one, and returns it.
    ///
    /// Every connection of the daemon is a descriptor, and every subscriber two more (its queue's
    /// wake-up pipe), so the common soft limit of 1,024 would run out at a few hundred
    /// subscribers, far below `--max-connections`. The hard limit is the administrator's (for
    /// example systemd's `LimitNOFILE=`); nothing in the daemon uses `select()`, which is what
    /// the low soft limit protects.
    @discardableResult
    package static func raise() -> UInt {
        var limit = rlimit()
        guard getrlimit(Int32(RLIMIT_NOFILE.rawValue), &limit) == 0 else { return 0 }
        if limit.rlim_cur < limit.rlim_max {
            var raised = limit
            raised.rlim_cur = limit.rlim_max
            if setrlimit(Int32(RLIMIT_NOFILE.rawValue), &raised) == 0 { limit = raised }
        }
        return UInt(limit.rlim_cur)
    }
}
