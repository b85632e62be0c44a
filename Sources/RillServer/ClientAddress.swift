#if canImport(Glibc)
    import Glibc
#endif

/// How log lines name a connection's client.
enum ClientAddress {
    /// `unix:pid=<pid>` for a Unix-socket peer (`unix` when the kernel does not say), the peer's
    /// `address:port` (`[address]:port` for IPv6) over TCP, `unknown` when it cannot be read.
    static func describe(_ fd: Int32, tcp: Bool) -> String {
        guard tcp else { return PeerCredentials(of: fd).map { "unix:pid=\($0.pid)" } ?? "unix" }
        var storage = sockaddr_storage()
        var length = socklen_t(MemoryLayout<sockaddr_storage>.size)
        let read = withUnsafeMutablePointer(to: &storage) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getpeername(fd, $0, &length) }
        }
        guard read == 0 else { return "unknown" }
        var host = [CChar](repeating: 0, count: Int(NI_MAXHOST))
        var service = [CChar](repeating: 0, count: Int(NI_MAXSERV))
        let named = withUnsafePointer(to: &storage) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                getnameinfo(
                    $0, length, &host, socklen_t(host.count), &service, socklen_t(service.count),
                    NI_NUMERICHOST | NI_NUMERICSERV)
            }
        }
        guard named == 0 else { return "unknown" }
        let address = String(decoding: host.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
        let port = String(decoding: service.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
        return Int32(storage.ss_family) == AF_INET6 ? "[\(address)]:\(port)" : "\(address):\(port)"
    }
}
