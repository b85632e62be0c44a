import Foundation
import Rill
import RillWorkloads

/// One malformed or oversized request of the `hostile` suite, with what the daemon must answer
/// (Documentation/Protocol.md, "Errors"), each on a connection of its own.
struct HostileRequest {
    /// What it tries, for a problem's sentence.
    let name: String
    /// The bytes sent, all at once.
    let bytes: [UInt8]
    /// The status the daemon must answer.
    let status: Int
    /// Over TCP without the token (else on the Unix socket).
    var overTCP = false
    /// The daemon must close the connection after answering (a request it cannot read past).
    var closes = true

    init(_ name: String, _ text: String, status: Int, overTCP: Bool = false, closes: Bool = true) {
        self.init(name, Array(text.utf8), status: status, overTCP: overTCP, closes: closes)
    }

    init(_ name: String, _ bytes: [UInt8], status: Int, overTCP: Bool = false, closes: Bool = true) {
        self.name = name
        self.bytes = bytes
        self.status = status
        self.overTCP = overTCP
        self.closes = closes
    }

    /// A request with a body, its `Content-Length` right.
    static func post(_ target: String, _ body: String, headers: String = "") -> String {
        "POST \(target) HTTP/1.1\r\nHost: rill\r\n\(headers)Content-Length: \(body.utf8.count)\r\n\r\n\(body)"
    }

    /// Every kind of request the suite sends, a round of them; random parts from `random`.
    /// `largeBody` is the size of the one body of garbage sent whole (under `--max-body`).
    static func catalog(largeBody: Int, using random: inout SeededGenerator) -> [HostileRequest] {
        let garbage = (0..<512).map { _ in UInt8.random(in: 0...255, using: &random) }
        let printable = String(
            (0..<300).map { _ in Character(UnicodeScalar(UInt8.random(in: 33...126, using: &random))) })
        let query = "TortureItem%20where%20number%20%3C%2010"
        var requests: [HostileRequest] = [
            // Garbage: random bytes ending a "head" (not UTF-8 or no request line), and a head that never ends.
            HostileRequest("random bytes", garbage + [13, 10, 13, 10], status: 400),
            HostileRequest("printable garbage", printable + "\r\n\r\n", status: 400),
            HostileRequest("a head without an end", Array(repeating: UInt8(ascii: "A"), count: 20 << 10), status: 431),
            // Bad request lines.
            HostileRequest("a bare method", "GET\r\n\r\n", status: 400),
            HostileRequest("no version", "GET /v1/health\r\n\r\n", status: 400),
            HostileRequest("a relative path", "GET v1/health HTTP/1.1\r\n\r\n", status: 400),
            HostileRequest("two spaces", "GET  /v1/health HTTP/1.1\r\n\r\n", status: 400),
            HostileRequest("HTTP/2", "GET /v1/health HTTP/2.0\r\n\r\n", status: 505),
            HostileRequest("the HTTP/2 preface", "PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n", status: 400),
            HostileRequest("bad percent-encoding", "GET /v1/%zz HTTP/1.1\r\n\r\n", status: 400),
            HostileRequest("a bad query string", "GET /v1/query?q=%E0%A4%A HTTP/1.1\r\n\r\n", status: 400),
            // Bad headers.
            HostileRequest("a header without a colon", "GET /v1/health HTTP/1.1\r\nNoColon\r\n\r\n", status: 400),
            HostileRequest("a header without a name", "GET /v1/health HTTP/1.1\r\n: value\r\n\r\n", status: 400),
            HostileRequest("a space in a header name", "GET /v1/health HTTP/1.1\r\nBad Name: x\r\n\r\n", status: 400),
            HostileRequest(
                "a negative Content-Length", "POST /v1/save HTTP/1.1\r\nContent-Length: -5\r\n\r\n", status: 400),
            HostileRequest(
                "a Content-Length past Int",
                "POST /v1/save HTTP/1.1\r\nContent-Length: 99999999999999999999999\r\n\r\n", status: 400),
            HostileRequest(
                "a header of 20 KiB",
                "GET /v1/health HTTP/1.1\r\nX-Big: \(String(repeating: "b", count: 20 << 10))\r\n\r\n", status: 431),
            HostileRequest(
                "4,000 headers",
                "GET /v1/health HTTP/1.1\r\n" + (0..<4000).map { "X-\($0): v\r\n" }.joined() + "\r\n", status: 431),
            HostileRequest(
                "1,000 headers (under the head's limit)",
                "GET /v1/health HTTP/1.1\r\n" + (0..<1000).map { "X-\($0): v\r\n" }.joined() + "\r\n", status: 200,
                closes: false),
            // Chunked bodies, well formed or not: refused before the body is read.
            HostileRequest(
                "a chunked body",
                "POST /v1/save HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n5\r\n[]   \r\n0\r\n\r\n", status: 411),
            HostileRequest(
                "a broken chunked body", "POST /v1/save HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\nxx",
                status: 411),
            HostileRequest(
                "chunked and Content-Length",
                "POST /v1/save HTTP/1.1\r\nTransfer-Encoding: chunked\r\nContent-Length: 3\r\n\r\n0\r\n\r\n",
                status: 411),
            // Bodies past --max-body are refused from their head, before they are sent.
            HostileRequest(
                "a body of 1 GiB announced", "POST /v1/save HTTP/1.1\r\nContent-Length: \(1 << 30)\r\n\r\n",
                status: 413),
            // Bad JSON.
            HostileRequest(
                "truncated JSON", post("/v1/save", #"{"changes": [{"op": "insert""#), status: 400, closes: false),
            HostileRequest(
                "JSON nested 100,000 deep", post("/v1/save", String(repeating: "[", count: 100_000)), status: 400,
                closes: false),
            HostileRequest(
                "a JSON string never closed", post("/v1/save", "[\"" + printable), status: 400, closes: false),
            HostileRequest("JSON of the wrong shape", post("/v1/save", #"{"changes": 5}"#), status: 400, closes: false),
            HostileRequest(
                "a change of an unknown entity",
                post("/v1/save", #"[{"op":"insert","entity":"Nope","record":{"id":"x"}}]"#), status: 404, closes: false),
            HostileRequest(
                "a field of the wrong kind",
                post(
                    "/v1/save",
                    #"[{"op":"insert","entity":"TortureItem","record":{"id":"x","writer":"w","number":1,"payload":""}}]"#
                ),
                status: 400, closes: false),
            HostileRequest(
                "a body of \(largeBody >> 20) MiB of garbage",
                post("/v1/save", "[" + String(repeating: "@", count: largeBody)), status: 400, closes: false),
            // Bad queries.
            HostileRequest("an empty query", "GET /v1/query?q= HTTP/1.1\r\n\r\n", status: 400, closes: false),
            HostileRequest("an unknown entity", "GET /v1/query?q=Nope HTTP/1.1\r\n\r\n", status: 404, closes: false),
            HostileRequest(
                "a query that does not parse", "GET /v1/query?q=TortureItem%20where%20%28%28 HTTP/1.1\r\n\r\n",
                status: 400, closes: false),
            HostileRequest(
                "an unknown field", "GET /v1/query?q=TortureItem%20where%20nope%20==%201 HTTP/1.1\r\n\r\n", status: 400,
                closes: false),
            HostileRequest(
                "parentheses 10,000 deep",
                post(
                    "/v1/query",
                    #"{"query":"TortureItem where "# + String(repeating: "(", count: 10_000) + #"number == 1"}"#),
                status: 400, closes: false),
            HostileRequest(
                "300 conditions",
                post(
                    "/v1/query",
                    #"{"query":"TortureItem where "#
                        + Array(repeating: "number == 1", count: 300).joined(separator: " or ")
                        + #""}"#), status: 200, closes: false),
            HostileRequest(
                "20,000 negations",
                post(
                    "/v1/query",
                    #"{"query":"TortureItem where "# + String(repeating: "not ", count: 20_000) + #"number == 1"}"#),
                status: 400, closes: false),
            HostileRequest(
                "a bad Last-Event-ID", "GET /v1/subscribe?q=TortureItem HTTP/1.1\r\nLast-Event-ID: x\r\n\r\n",
                status: 400, closes: false),
            HostileRequest(
                "a bad progress interval", "GET /v1/subscribe?q=TortureItem&progress=-1 HTTP/1.1\r\n\r\n", status: 400,
                closes: false),
            HostileRequest(
                "a subscription name of 1 KiB",
                "GET /v1/subscribe?q=TortureItem&subscription=\(String(repeating: "n", count: 1024)) HTTP/1.1\r\n\r\n",
                status: 400, closes: false),
            HostileRequest("a wrong method", "GET /v1/save HTTP/1.1\r\n\r\n", status: 405, closes: false),
            HostileRequest("an unknown endpoint", "GET /v2/everything HTTP/1.1\r\n\r\n", status: 404, closes: false),
        ]
        // Over TCP, nothing without the token: every endpoint answers 401, whatever it is asked.
        let token = [
            "", "Authorization: Bearer wrong\r\n", "Authorization: Basic eDp5\r\n", "Authorization: Bearer\r\n",
        ]
        for (index, header) in token.enumerated() {
            requests.append(
                HostileRequest(
                    "a TCP query, token \(index)", "GET /v1/query?q=\(query) HTTP/1.1\r\n\(header)\r\n", status: 401,
                    overTCP: true))
            requests.append(
                HostileRequest(
                    "a TCP subscription, token \(index)", "GET /v1/subscribe?q=\(query) HTTP/1.1\r\n\(header)\r\n",
                    status: 401, overTCP: true))
        }
        requests += [
            HostileRequest(
                "a TCP subscription, a wrong access_token",
                "GET /v1/subscribe?q=\(query)&access_token=wrong HTTP/1.1\r\n\r\n", status: 401, overTCP: true),
            HostileRequest(
                "a TCP history without the token", "GET /v1/history?since=0 HTTP/1.1\r\n\r\n", status: 401,
                overTCP: true),
            HostileRequest(
                "a TCP schema without the token", "GET /v1/schema HTTP/1.1\r\n\r\n", status: 401, overTCP: true),
            HostileRequest(
                "a TCP health without the token", "GET /v1/health HTTP/1.1\r\n\r\n", status: 401, overTCP: true),
            HostileRequest(
                "a TCP save without the token",
                post(
                    "/v1/save",
                    #"[{"op":"insert","entity":"TortureItem","record":{"id":"intruder","writer":9,"number":-1,"payload":""}}]"#
                ),
                status: 401, overTCP: true),
            HostileRequest(
                "a TCP body announced without the token", "POST /v1/save HTTP/1.1\r\nContent-Length: 100000\r\n\r\n",
                status: 401, overTCP: true),
            HostileRequest("TCP garbage", garbage + [13, 10, 13, 10], status: 400, overTCP: true),
        ]
        return requests
    }
}
