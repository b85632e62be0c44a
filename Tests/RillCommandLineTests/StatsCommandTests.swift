import Foundation
import RillTestSupport
import RillWorkloads
import Testing

/// `rill stats`: the store's figures offline, and with `--url` those of the daemon serving it.
@Suite struct StatsCommandTests {
    let directory = TemporaryDirectory()

    func stats(_ arguments: [String]) throws -> ProcessRun {
        try runBuilt("rill", ["stats"] + arguments)
    }

    @Test func offlineFiguresIncludeTheLogAndEachEntitysSize() throws {
        let path = try directory.counterStore(records: 50, payload: 100)
        let json = try stats([path, "--json"])
        #expect(json.status == 0, "\(json.error)")
        let object = try #require(try JSONSerialization.jsonObject(with: Data(json.output.utf8)) as? [String: Any])
        #expect(object["commits"] as? Int == 1)
        #expect((object["logSize"] as? Int ?? 0) >= 50 * 100, "the log holds every record once: \(object)")
        let sizes = try #require(object["entitySizes"] as? [String: Int])
        #expect(Set(sizes.keys) == ["Counter"])
        #expect((sizes["Counter"] ?? 0) >= 50 * 100)
        #expect(object["daemon"] == nil, "no daemon is read without --url")
        let text = try stats([path])
        #expect(text.output.contains("log size:  "), "\(text.output)")
        #expect(text.output.contains("Counter  50 records, "), "\(text.output)")
    }

    @Test func withURLTheDaemonsFiguresFollowTheSavesMade() throws {
        let seed = UInt64.random(in: 0...UInt64(UInt32.max))
        print("StatsCommandTests.withURLTheDaemonsFiguresFollowTheSavesMade seed \(seed)")
        var random = SeededGenerator(seed: seed)
        let path = try directory.counterStore(records: 2)
        let daemon = try DaemonProcess(store: path, log: directory.path("serve.log"))
        let saves = Int.random(in: 1...8, using: &random)
        let client = try HTTPTestClient(unix: daemon.socket)
        for index in 0..<saves {
            let change = #"{"op":"insert","entity":"Counter","record":{"id":\#(100 + index),"value":1,"payload":""}}"#
            #expect(client.request("POST", "/v1/save", body: "[" + change + "]")?.status == 200)
        }
        let json = try stats([path, "--json", "--url", path])
        #expect(json.status == 0, "\(json.error)")
        let object = try #require(try JSONSerialization.jsonObject(with: Data(json.output.utf8)) as? [String: Any])
        let figures = try #require(object["daemon"] as? [String: Any], "\(json.output)")
        #expect(figures["rill_saves_total"] as? Int == saves)
        #expect(figures["rill_commits_total"] as? Int == saves)
        #expect(figures["rill_commit_records_sum"] as? Int == saves)
        #expect(figures["rill_log_head"] as? Int == 1 + saves)
        #expect(figures[#"rill_connections_accepted_total{listener="unix"}"#] != nil)
        #expect(!figures.keys.contains { $0.hasSuffix("_bucket") || $0.contains("_bucket{") })

        let text = try stats([path, "--url", daemon.socket])
        #expect(text.status == 0, "\(text.error)")
        #expect(text.output.contains("daemon:    unix:\(daemon.socket)"), "\(text.output)")
        #expect(text.output.contains("  saves:         \(saves) (mean "), "\(text.output)")
        #expect(text.output.contains("  commits:       \(saves) (mean 1.0 records)"), "\(text.output)")
        #expect(text.output.contains("  follower lag:  0 commits, 0 ms"), "\(text.output)")
        #expect(daemon.stop() == 0)
    }

    @Test func aDaemonThatDoesNotAnswerOrRefusesIsAClearFailure() throws {
        let path = try directory.counterStore(records: 1)
        let absent = try stats([path, "--url", directory.path("no.sock")])
        #expect(absent.status == 1, "\(absent)")
        #expect(absent.error.contains("no.sock"), "\(absent.error)")
        #expect(absent.output.isEmpty, "nothing is printed when the daemon cannot be read")

        let port = try freeTCPPort()
        let daemon = try DaemonProcess(
            store: path, arguments: ["--listen", "127.0.0.1:\(port)"], environment: ["RILL_TOKEN": "right"],
            log: directory.path("serve.log"))
        let tokenFile = directory.path("token")
        try "wrong\n".write(toFile: tokenFile, atomically: true, encoding: .utf8)
        let refused = try stats([path, "--url", "http://127.0.0.1:\(port)", "--token-file", tokenFile])
        #expect(refused.status == 1, "\(refused)")
        #expect(refused.error.contains("401"), "\(refused.error)")
        try "right\n".write(toFile: tokenFile, atomically: true, encoding: .utf8)
        let allowed = try stats([path, "--url", "http://127.0.0.1:\(port)", "--token-file", tokenFile])
        #expect(allowed.status == 0, "\(allowed.error)")
        #expect(allowed.output.contains("    status=401,reason=unauthorized  1"), "\(allowed.output)")
        #expect(daemon.stop() == 0)
    }
}
