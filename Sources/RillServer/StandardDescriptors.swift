#if canImport(Glibc)
    import Glibc
#endif

/// Standard input, output and error, as descriptors 0, 1 and 2.
package enum StandardDescriptors {
    /// Opens `/dev/null` on whichever of descriptors 0, 1 and 2 is closed (`rill serve S 2>&-`).
    ///
    /// A closed one is the lowest free descriptor: the next file the process opens — the store's
    /// lock file, say — would get it, and every line logged to standard error would then be
    /// written into that file.
    package static func reserve() {
        for fd in Int32(0)...2 where fcntl(fd, F_GETFD) == -1 && errno == EBADF {
            let opened = open("/dev/null", fd == 0 ? O_RDONLY : O_WRONLY)
            guard opened >= 0, opened != fd else { continue }
            dup2(opened, fd)
            close(opened)
        }
    }
}
