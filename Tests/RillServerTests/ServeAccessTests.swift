import Foundation
import RillTestSupport
import RillWorkloads
import Testing

@testable import RillServer

#if canImport(Glibc)
    import Glibc
#endif

/// Who `rill serve` serves: on the Unix socket its own user and root only (the socket's mode,
/// and the peer's credentials on accept); over TCP nothing but 401 without the token; and a
/// listener beyond loopback, which has no TLS, is warned about.
@Suite struct ServeAccessTests {
    let directory = TemporaryDirectory()
    let token = "t0ken-\(UUID())"

    /// Why a client cannot be run as uid 65534 here, or nil when it can.
    static var whyNoOtherUser: String? {
        if geteuid() != 0 { return "not root: cannot run a client as uid 65534" }
        if access("/usr/bin/setpriv", X_OK) != 0 { return "setpriv (util-linux) is not installed" }
        let probe = runAsNobody(["http-get", "/nonexistent/rill.sock", "/v1/health"])
        guard probe.hasPrefix("refused") else {
            return "rill-test-helper does not run as uid 65534 from its build directory: \(probe)"
        }
        return nil
    }

    /// `rill-test-helper arguments…` run as uid and gid 65534 (nobody), without supplementary
    /// groups; what it printed.
    static func runAsNobody(_ arguments: [String]) -> String {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/setpriv")
        process.arguments =
            ["--reuid=65534", "--regid=65534", "--clear-groups", "--"]
            + [buildProductsDirectory.appendingPathComponent("rill-test-helper").path] + arguments
        let output = Pipe()
        process.standardOutput = output
        process.standardError = output
        guard (try? process.run()) != nil else { return "setpriv did not start" }
        let data = output.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        return String(decoding: data, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
    }

    @Test func theSocketRefusesOtherUsers() throws {
        if let reason = Self.whyNoOtherUser {
            print("skipped: \(reason)")
            return
        }
        let path = try directory.counterStore()
        let daemon = try DaemonProcess(store: path, log: directory.path("serve.log"))
        // The socket is 0600 in the store's 0700 directory: another user cannot even connect.
        var status = stat()
        #expect(stat(daemon.socket, &status) == 0 && status.st_mode & 0o777 == 0o600)
        let nobody = Self.runAsNobody(["http-get", daemon.socket, "/v1/health"])
        #expect(nobody.hasPrefix("refused") && nobody.contains("Permission denied"), "\(nobody)")
        #expect(try runBuilt("rill-test-helper", ["http-get", daemon.socket, "/v1/health"]).output == "status 200\n")
        #expect(daemon.stop() == 0)
    }

    @Test func aPeerOfAnotherUserIsRefusedOnAccept() throws {
        if let reason = Self.whyNoOtherUser {
            print("skipped: \(reason)")
            return
        }
        let path = try directory.counterStore()
        let daemon = try DaemonProcess(store: path, log: directory.path("serve.log"))
        // A socket another user can reach (its directories and itself opened up by mistake):
        // the peer's credentials still keep that user out.
        let socket = daemon.socket
        chmod(directory.url.path, 0o755)
        chmod(path, 0o711)
        chmod(socket, 0o666)
        let nobody = Self.runAsNobody(["http-get", socket, "/v1/health"])
        #expect(nobody == "status 403", "\(nobody)")
        #expect(daemon.logs("refused a local connection of uid 65534"), "\(daemon.logText)")
        // The daemon's own user (root here) is served, before and after.
        #expect(try runBuilt("rill-test-helper", ["http-get", socket, "/v1/health"]).output == "status 200\n")
        #expect(daemon.stop() == 0)
    }

    @Test func theDaemonsOwnUserAndRootAreTrusted() throws {
        // A socket pair: the peer is this process, of this process's user.
        var pair: [Int32] = [-1, -1]
        #expect(socketpair(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0, &pair) == 0)
        defer { pair.forEach { close($0) } }
        let peer = try #require(PeerCredentials(of: pair[0]))
        #expect(peer.uid == geteuid())
        #expect(peer.pid == getpid())
        #expect(peer.isTrusted)
        // Not a socket: the kernel says nothing, and the peer is not trusted.
        #expect(PeerCredentials(of: -1) == nil)
    }

    @Test func tcpWithoutTheTokenGetsOnly401() throws {
        let path = try directory.counterStore(records: 3)
        let port = try freeTCPPort()
        let daemon = try DaemonProcess(
            store: path, arguments: ["--listen", ":\(port)"], environment: ["RILL_TOKEN": token],
            log: directory.path("serve.log"))
        let requests: [(String, String, String?)] = [
            ("GET", "/v1/query?q=Counter", nil),
            ("POST", "/v1/query", #"{"query":"Counter"}"#),
            ("GET", "/v1/subscribe?q=Counter", nil),
            ("GET", "/v1/history?since=0", nil),
            ("GET", "/v1/schema", nil),
            ("GET", "/v1/subscriptions", nil),
            ("GET", "/v1/health", nil),
            ("POST", "/v1/save", #"[{"op":"insert","entity":"Counter","record":{"id":77,"value":7,"payload":""}}]"#),
            ("GET", "/v1/nowhere", nil),
        ]
        let credentials = [
            [], ["Authorization: Bearer wrong"], ["Authorization: Bearer \(token)x"],
            ["Authorization: Basic dXNlcjpwdw=="],
            ["Authorization: Bearer"], ["Authorization: \(token)"],
        ]
        for (method, target, body) in requests {
            for headers in credentials {
                let client = try HTTPTestClient(port: port)
                let response = try #require(client.request(method, target, body: body, headers: headers))
                #expect(response.status == 401, "\(method) \(target) \(headers)")
                // Nothing but the error: no records, no commit number, no stream.
                #expect(response.body.hasPrefix(#"{"error":{"code":"unauthorized","#), "\(response.body)")
                #expect(!response.body.contains("seq") && !response.body.contains("Counter"), "\(response.body)")
            }
            // A wrong token in the URL, which a subscription may carry, is refused the same.
            let client = try HTTPTestClient(port: port)
            let separator = target.contains("?") ? "&" : "?"
            let response = try #require(client.request(method, target + separator + "access_token=wrong", body: body))
            #expect(response.status == 401, "\(method) \(target) with a wrong access_token")
        }
        // The save without the token wrote nothing; with it, the same request is served.
        let local = try HTTPTestClient(unix: daemon.socket)
        #expect(local.request("GET", "/v1/query?q=Counter%20where%20id%20==%2077")?.body.contains("\"id\":77") == false)
        let authorized = try HTTPTestClient(port: port)
        #expect(authorized.request("GET", "/v1/health", headers: ["Authorization: Bearer \(token)"])?.status == 200)
        #expect(daemon.stop() == 0)
    }

    @Test func listeningBeyondLoopbackWarnsAtStartUp() throws {
        let path = try directory.counterStore()
        let port = try freeTCPPort()
        let open = try DaemonProcess(
            store: path, arguments: ["--listen", "0.0.0.0:\(port)"], environment: ["RILL_TOKEN": token],
            log: directory.path("open.log"))
        #expect(open.stop() == 0)
        #expect(
            open.logText.contains(
                "warning listening on http://0.0.0.0:\(port) beyond loopback without TLS"), "\(open.logText)")
        #expect(open.logText.contains("reverse proxy"))
        let loopback = try DaemonProcess(
            store: path, arguments: ["--listen", "127.0.0.1:\(port)"], environment: ["RILL_TOKEN": token],
            log: directory.path("loopback.log"))
        #expect(loopback.stop() == 0)
        #expect(!loopback.logText.contains("beyond loopback"), "\(loopback.logText)")
    }

    @Test func loopbackIsTheLoopbackInterfaceOnly() {
        for host in ["127.0.0.1", "127.1.2.3", "::1", "localhost"] {
            #expect(Server.isLoopback(host), "\(host)")
        }
        for host in ["0.0.0.0", "::", "10.0.0.1", "192.168.1.20", "8.8.8.8", "fe80::1", "::ffff:10.0.0.1"] {
            #expect(!Server.isLoopback(host), "\(host)")
        }
    }
}
