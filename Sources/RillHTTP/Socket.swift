import Dispatch
import Foundation

#if canImport(Glibc)
    import Glibc
#endif

/// Thin wrappers over the socket calls `rill serve` needs.
package enum Socket {
    /// A listening socket. A Unix socket's file is created with mode 0600; a stale one (no
    /// process listening) is replaced, a live one refused, and anything else at the path (a
    /// file, a directory, a link) refused and left as it is.
    package static func listen(_ address: SocketAddress) throws -> Int32 {
        switch address {
        case .unix(let path):
            var status = stat()
            if lstat(path, &status) == 0 {
                guard status.st_mode & S_IFMT == S_IFSOCK else {
                    throw SocketError("\(path) exists and is not a socket; not replaced", EEXIST)
                }
                if let probe = try? connect(address) {
                    close(probe)
                    throw SocketError("another process is serving on \(path)", EADDRINUSE)
                }
                unlink(path)
            }
            // Created 0600 without touching the process-wide umask (another thread may be creating
            // a store's directory): Linux gives the file the socket inode's mode, less the umask.
            return try withNewSocket(AF_UNIX) { fd in
                guard fchmod(fd, 0o600) == 0 else { throw SocketError("fchmod \(path)") }
                try withUnixAddress(path) { address, length in
                    guard bind(fd, address, length) == 0 else { throw SocketError("bind \(path)") }
                }
                guard Glibc.listen(fd, 128) == 0 else { throw SocketError("listen") }
                chmod(path, 0o600)
            }
        case .tcp(let host, let port):
            return try withTCPAddress(host, port) { family, address, length in
                try withNewSocket(family) { fd in
                    var yes: Int32 = 1
                    setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &yes, socklen_t(MemoryLayout<Int32>.size))
                    guard bind(fd, address, length) == 0 else { throw SocketError("bind \(host):\(port)") }
                    guard Glibc.listen(fd, 128) == 0 else { throw SocketError("listen") }
                }
            }
        }
    }

    /// A socket connected to `address` (TCP with Nagle's algorithm off).
    package static func connect(_ address: SocketAddress) throws -> Int32 {
        switch address {
        case .unix(let path):
            return try withNewSocket(AF_UNIX) { fd in
                try withUnixAddress(path) { address, length in
                    guard Glibc.connect(fd, address, length) == 0 else { throw SocketError("connect \(path)") }
                }
            }
        case .tcp(let host, let port):
            return try withTCPAddress(host, port) { family, address, length in
                try withNewSocket(family) { fd in
                    guard Glibc.connect(fd, address, length) == 0 else {
                        throw SocketError("connect \(host):\(port)")
                    }
                    setNoDelay(fd)
                }
            }
        }
    }

    /// A new stream socket of `family`, set up by `body`; closed again when `body` throws.
    private static func withNewSocket(_ family: Int32, _ body: (Int32) throws -> Void) throws -> Int32 {
        let fd = socket(family, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard fd >= 0 else { throw SocketError("socket") }
        do {
            try body(fd)
            return fd
        } catch {
            close(fd)
            throw error
        }
    }

    private static func withUnixAddress<R>(
        _ path: String, _ body: (UnsafePointer<sockaddr>, socklen_t) throws -> R
    ) throws -> R {
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        let bytes = Array(path.utf8)
        let capacity = MemoryLayout.size(ofValue: address.sun_path)
        guard bytes.count < capacity else {
            throw SocketError("the socket path \(path) is longer than \(capacity - 1) bytes", ENAMETOOLONG)
        }
        withUnsafeMutableBytes(of: &address.sun_path) { raw in
            raw.copyBytes(from: bytes)
            raw[bytes.count] = 0
        }
        return try withUnsafePointer(to: &address) {
            try $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                try body($0, socklen_t(MemoryLayout<sockaddr_un>.size))
            }
        }
    }

    private static func withTCPAddress<R>(
        _ host: String, _ port: UInt16, _ body: (Int32, UnsafePointer<sockaddr>, socklen_t) throws -> R
    ) throws -> R {
        var hints = addrinfo()
        hints.ai_socktype = Int32(SOCK_STREAM.rawValue)
        hints.ai_flags = AI_NUMERICSERV
        var result: UnsafeMutablePointer<addrinfo>?
        let status = getaddrinfo(host, String(port), &hints, &result)
        guard status == 0, let first = result else {
            throw SocketError("cannot resolve \(host): \(String(cString: gai_strerror(status)))", EINVAL)
        }
        defer { freeaddrinfo(result) }
        return try body(first.pointee.ai_family, first.pointee.ai_addr, first.pointee.ai_addrlen)
    }

    /// Sets the receive and send timeouts of `fd`.
    package static func setTimeouts(_ fd: Int32, receive: Double, send: Double) {
        for (option, seconds) in [(SO_RCVTIMEO, receive), (SO_SNDTIMEO, send)] {
            var time = timeval(tv_sec: Int(seconds), tv_usec: Int((seconds - seconds.rounded(.down)) * 1_000_000))
            setsockopt(fd, SOL_SOCKET, option, &time, socklen_t(MemoryLayout<timeval>.size))
        }
    }

    /// The next connection on `listener`, close-on-exec, with Nagle's algorithm off when it is
    /// TCP; -1 with `errno` set when `accept` fails.
    package static func accept(_ listener: Int32, tcp: Bool) -> Int32 {
        let fd = Glibc.accept(listener, nil, nil)
        guard fd >= 0 else { return fd }
        _ = fcntl(fd, F_SETFD, FD_CLOEXEC)
        if tcp { setNoDelay(fd) }
        return fd
    }

    /// Turns off Nagle's algorithm on a TCP socket. A request or a response is written whole in
    /// one call, so there is nothing to coalesce; left on, a small segment written while the
    /// previous one is unacknowledged waits for the peer's delayed ACK (up to 40 ms on Linux).
    package static func setNoDelay(_ fd: Int32) {
        var yes: Int32 = 1
        setsockopt(fd, Int32(IPPROTO_TCP), TCP_NODELAY, &yes, socklen_t(MemoryLayout<Int32>.size))
    }

    /// What ``wait(_:until:alsoFor:)`` saw.
    package enum Readiness: Equatable {
        /// `fd` can be read (bytes, or the end of the stream), or the peer hung up.
        case readable
        /// The other descriptor can be read.
        case other
        case timedOut
    }

    /// Waits until `fd` can be read or its peer hangs up, `other` (if not -1) can be read, or
    /// the monotonic clock reaches `deadline` (`DispatchTime.uptimeNanoseconds`).
    package static func wait(_ fd: Int32, until deadline: UInt64, alsoFor other: Int32 = -1) -> Readiness {
        // POLLRDHUP (Linux): the peer shut down its side, even before its last bytes are read.
        let peerHangUp = Int16(0x2000)
        while true {
            let now = DispatchTime.now().uptimeNanoseconds
            guard now < deadline else { return .timedOut }
            let milliseconds = Int32(min((deadline - now + 999_999) / 1_000_000, UInt64(Int32.max)))
            var entries = [pollfd(fd: fd, events: Int16(POLLIN) | peerHangUp, revents: 0)]
            if other >= 0 { entries.append(pollfd(fd: other, events: Int16(POLLIN), revents: 0)) }
            let count = poll(&entries, nfds_t(entries.count), milliseconds)
            if count < 0, errno == EINTR { continue }
            if count < 0 { return .readable }  // Let the read that follows report it.
            if count == 0 { continue }  // Rounded up: the deadline is checked again.
            if entries[0].revents != 0 { return .readable }
            return .other
        }
    }

    /// Writes all of `bytes`; false when the peer is gone or the send timed out.
    package static func write(_ fd: Int32, _ bytes: [UInt8]) -> Bool {
        var offset = 0
        while offset < bytes.count {
            let sent = bytes.withUnsafeBytes { raw in
                send(fd, raw.baseAddress! + offset, raw.count - offset, Int32(MSG_NOSIGNAL))
            }
            if sent < 0 {
                if errno == EINTR { continue }
                return false
            }
            offset += sent
        }
        return true
    }
}
