import Foundation
import Testing

@testable import RillHTTP

#if canImport(Glibc)
    import Glibc
#endif

/// The daemon's sockets.
@Suite struct SocketTests {
    static func noDelay(_ fd: Int32) -> Int32 {
        var value: Int32 = 0
        var length = socklen_t(MemoryLayout<Int32>.size)
        getsockopt(fd, Int32(IPPROTO_TCP), TCP_NODELAY, &value, &length)
        return value
    }

    /// Nagle's algorithm holds a small write back while an earlier one is unacknowledged, and a
    /// peer delays its ACKs: off on both ends, a request or an event is sent when written.
    @Test func tcpConnectionsHaveNagleOffOnBothEnds() throws {
        let listener = try Socket.listen(.tcp(host: "127.0.0.1", port: 0))
        defer { close(listener) }
        var address = sockaddr_in()
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        _ = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(listener, $0, &length) }
        }
        let client = try Socket.connect(.tcp(host: "127.0.0.1", port: UInt16(bigEndian: address.sin_port)))
        defer { close(client) }
        let accepted = Socket.accept(listener, tcp: true)
        #expect(accepted >= 0)
        defer { close(accepted) }
        #expect(Self.noDelay(client) != 0, "the client's socket")
        #expect(Self.noDelay(accepted) != 0, "the daemon's socket")
        #expect(fcntl(accepted, F_GETFD) & FD_CLOEXEC != 0)
    }

    /// A Unix socket's path holding anything but a socket (a store's data file, a directory, a
    /// link) is refused and left as it is; a stale socket is replaced.
    @Test func aUnixSocketReplacesOnlyAStaleSocket() throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("rill-socket-\(UUID())")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let file = directory.appendingPathComponent("data.mdb").path
        try Data("precious".utf8).write(to: URL(fileURLWithPath: file))
        let link = directory.appendingPathComponent("link").path
        try FileManager.default.createSymbolicLink(atPath: link, withDestinationPath: file)
        let folder = directory.appendingPathComponent("folder").path
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: false)
        for path in [file, link, folder] {
            #expect(throws: SocketError.self) { try Socket.listen(.unix(path)) }
        }
        #expect(try Data(contentsOf: URL(fileURLWithPath: file)) == Data("precious".utf8))
        #expect((try? FileManager.default.destinationOfSymbolicLink(atPath: link)) == file)
        var isDirectory: ObjCBool = false
        #expect(FileManager.default.fileExists(atPath: folder, isDirectory: &isDirectory) && isDirectory.boolValue)

        // A socket nobody listens on any more is replaced; a live one is refused.
        let path = directory.appendingPathComponent("rill.sock").path
        close(try Socket.listen(.unix(path)))
        let listener = try Socket.listen(.unix(path))
        defer { close(listener) }
        #expect(throws: SocketError.self) { try Socket.listen(.unix(path)) }
    }
}
