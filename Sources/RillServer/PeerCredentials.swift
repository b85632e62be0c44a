#if canImport(Glibc)
    import Glibc
#endif

/// Who is at the other end of a Unix-socket connection, as the kernel says (`SO_PEERCRED`).
///
/// The socket file is mode 0600 in the store's directory (0700), so that only its owner can
/// connect; the daemon checks the peer on accept as well, so that a socket made reachable by
/// mistake (a `--socket` in a shared directory, a `chmod`) still serves no one else.
struct PeerCredentials: Equatable {
    let pid: Int32
    let uid: UInt32
    let gid: UInt32

    /// The credentials of `fd`'s peer, or nil when the kernel does not say.
    init?(of fd: Int32) {
        // `struct ucred` (pid_t, uid_t, gid_t), which Glibc exports only under _GNU_SOURCE.
        var credentials: (pid: Int32, uid: UInt32, gid: UInt32) = (0, 0, 0)
        var length = socklen_t(MemoryLayout.size(ofValue: credentials))
        guard getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &credentials, &length) == 0,
            Int(length) == MemoryLayout.size(ofValue: credentials)
        else { return nil }
        (pid, uid, gid) = credentials
    }

    /// Whether the daemon serves this peer: one of its own user's processes, or root's.
    var isTrusted: Bool { uid == geteuid() || uid == 0 }
}
