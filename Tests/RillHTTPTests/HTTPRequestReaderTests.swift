import Foundation
import RillTestSupport
import RillWorkloads
import Testing

@testable import RillHTTP

/// The daemon's HTTP request reader on its own: requests split anywhere, pipelined requests, and
/// random bytes, which give a request, a wait for more, or an error — never a crash.
@Suite struct HTTPRequestReaderTests {
    @Test func requestsSplitAnywhereReadTheSame() throws {
        let text =
            "POST /v1/save?x=a%20b&y=1+2 HTTP/1.1\r\nHost: rill\r\nContent-Length: 5\r\nX-Thing:  spaced \r\n\r\nhello"
            + "GET /v1/health HTTP/1.1\r\nConnection: close\r\n\r\n"
        let bytes = Array(text.utf8)
        for split in 0...bytes.count {
            var reader = HTTPRequestReader(limits: HTTPLimits())
            var requests: [HTTPRequest] = []
            for part in [bytes[..<split], bytes[split...]] {
                part.withUnsafeBytes { reader.append($0) }
                while let request = try reader.next() { requests.append(request) }
            }
            #expect(requests.count == 2, "split at \(split)")
            guard requests.count == 2 else { continue }
            #expect(requests[0].method == "POST" && requests[0].path == "/v1/save")
            #expect(requests[0].parameters == ["x": "a b", "y": "1 2"])
            #expect(requests[0].headers["x-thing"] == "spaced" && requests[0].body == Array("hello".utf8))
            #expect(requests[0].keepAlive && !requests[1].keepAlive)
        }
    }

    /// A head of exactly the limit is read whether its blank line arrives at once or a byte at a
    /// time, and one byte more is refused either way (found by fuzzing: the bytes before the blank
    /// line was whole were refused as too large).
    @Test func aHeadAtTheLimitDoesNotDependOnHowItArrives() throws {
        let head = Array("GET /v1/health HTTP/1.1\r\nX-Pad: abc\r\n\r\n".utf8)
        for (extra, accepted) in [(0, true), (1, false)] {
            let limits = HTTPLimits(headerBytes: head.count - 4 - extra, bodyBytes: 0)
            var whole = HTTPRequestReader(limits: limits)
            head.withUnsafeBytes { whole.append($0) }
            let wholeResult = Result { try whole.next() }
            var byByte = HTTPRequestReader(limits: limits)
            var byByteResult: Result<HTTPRequest?, any Error> = .success(nil)
            for byte in head {
                [byte].withUnsafeBytes { byByte.append($0) }
                byByteResult = Result { try byByte.next() }
                if case .failure = byByteResult { break }
            }
            for result in [wholeResult, byByteResult] {
                switch result {
                case .success(let request): #expect(accepted && request?.path == "/v1/health", "extra \(extra)")
                case .failure(let error): #expect(!accepted && (error as? HTTPError)?.status == 431, "extra \(extra)")
                }
            }
        }
    }

    /// A head with a line ended by a bare LF before its blank line is refused for it whether the
    /// blank line arrives with it or after (found by fuzzing: bytes that were not UTF-8 were
    /// refused for that when they came at once, and for the bare LF when they came in pieces).
    @Test func bareLineFeedsAreRefusedHoweverTheHeadArrives() throws {
        let heads: [[UInt8]] = [
            [0x10, 0, 0, 0, 0, 0, 0, 0, 0x0A, 0xBF, 0x9A, 0x2B] + Array("\n\n\nET /a) HTTP/1.1\r\n\r\n".utf8),
            Array("GET /v1/health HTTP/1.1\n\nHost: x\r\n\r\n".utf8),
            Array("GET /v1/health HTTP/1.1\r\nHost: x\n\n\r\n\r\n".utf8),
            Array("GET /v1/health HTTP/1.1\r\n\nHost: x\r\n\r\n".utf8),
            // Bare LFs after the blank line are the next request's.
            Array("GET /v1/health HTTP/1.1\r\nHost: x\r\n\r\n\n\n".utf8),
        ]
        for (number, head) in heads.enumerated() {
            func outcome(splittingEvery size: Int) -> String {
                var reader = HTTPRequestReader(limits: HTTPLimits())
                var start = 0
                var paths: [String] = []
                while start < head.count {
                    let end = min(start + size, head.count)
                    head[start..<end].withUnsafeBytes { reader.append($0) }
                    start = end
                    do {
                        while let request = try reader.next() { paths.append(request.path) }
                    } catch {
                        return "\(paths) \(error.status) \(error.message)"
                    }
                }
                return "\(paths)"
            }
            let whole = outcome(splittingEvery: head.count)
            // The last one's request is read, and its bare LFs are then refused as a head's.
            #expect(whole.hasPrefix(number < 4 ? "[] 400" : "[\"/v1/health\"] 400"), "head \(number): \(whole)")
            #expect(whole.hasSuffix("each line of the request head must end with CR LF"), "head \(number): \(whole)")
            for size in 1..<head.count {
                #expect(outcome(splittingEvery: size) == whole, "head \(number), pieces of \(size)")
            }
        }
    }

    /// A head of ASCII bytes is read from its bytes, any other as text: the byte reading gives
    /// the request or the error the text reading gives (`parseHead(readingText:)`), for random
    /// heads of the pieces that matter to it, ASCII or not.
    @Test func headsReadFromTheirBytesAsFromTheirText() throws {
        var random = SeededGenerator(label: "http heads")
        let requestPieces = [
            "GET", "POST", "get", " ", "  ", "/", "/v1/save", "/a%20b", "/a%2", "/%zz", "/caf%C3%A9", "/%FF", "?",
            "?x=1", "&", "&&", "=", "y=a+b%2B", "q", "%41", "+", "HTTP/1.1", "HTTP/1.0", "HTTP/2", "\r", "\t", "é",
            "http://rill", "HTTPS://h:8080", "http://", "http:/x",
        ]
        let targetPieces = [
            "v1", "/save", "%20", "%2", "%zz", "%C3%A9", "%FF", "?", "?x=1", "&", "&&", "=", "y=a+b%2B", "q", "%41",
            "+", "é", "%", "x=%", "==",
        ]
        let headerPieces = [
            "Host", "Content-Length", "content-length", "CONNECTION", "Connection", "Transfer-Encoding", ":", ": ",
            "\t", " ", "close", "keep-alive", "Keep-Alive, Upgrade", "5", "+5", "-1", " 7 ", "99999999999999999999",
            "x", "X-Pad", "\r", "\n", "é", "\u{0B}", "\u{A0}",
        ]
        var read = 0
        var refused = 0
        for _ in 0..<20_000 {
            var head = ""
            if Int.random(in: 0..<4, using: &random) == 0 {
                for _ in 0..<Int.random(in: 0...7, using: &random) {
                    head += requestPieces.randomElement(using: &random)!
                }
            } else {
                // Method, target and version, mostly well formed.
                head = ["GET", "POST", "get", ""].randomElement(using: &random)! + " "
                head += ["/", "/", "/", "http://rill/", "http://rill", "Http://h:1"].randomElement(using: &random)!
                for _ in 0..<Int.random(in: 0...4, using: &random) {
                    head += targetPieces.randomElement(using: &random)!
                }
                head += " " + ["HTTP/1.1", "HTTP/1.1", "HTTP/1.0", "HTTP/2"].randomElement(using: &random)!
            }
            for _ in 0..<Int.random(in: 0...4, using: &random) {
                head += "\r\n"
                for _ in 0..<Int.random(in: 0...5, using: &random) {
                    head += headerPieces.randomElement(using: &random)!
                }
            }
            let bytes = ArraySlice(Array(head.utf8))
            let limits = HTTPLimits(headerBytes: 1 << 10, bodyBytes: 100)
            let fromBytes = Result { () throws(HTTPError) in try HTTPRequestReader.parseHead(bytes, limits: limits) }
            let fromText = Result { () throws(HTTPError) in
                try HTTPRequestReader.parseHead(bytes, limits: limits, readingText: true)
            }
            switch (fromBytes, fromText) {
            case (.success(let a), .success(let b)):
                read += 1
                #expect(a.length == b.length, "\(head.debugDescription)")
                #expect(a.request.method == b.request.method, "\(head.debugDescription)")
                #expect(a.request.path == b.request.path, "\(head.debugDescription)")
                #expect(a.request.parameters == b.request.parameters, "\(head.debugDescription)")
                #expect(a.request.headers == b.request.headers, "\(head.debugDescription)")
                #expect(a.request.keepAlive == b.request.keepAlive, "\(head.debugDescription)")
            case (.failure(let a), .failure(let b)):
                refused += 1
                #expect(
                    a.status == b.status && a.code == b.code && a.message == b.message
                        && a.closesConnection == b.closesConnection, "\(head.debugDescription)")
            default:
                Issue.record("\(head.debugDescription): bytes \(fromBytes), text \(fromText)")
            }
        }
        #expect(read > 1_000 && refused > 1_000, "read \(read), refused \(refused)")
    }

    @Test func randomBytesNeverCrash() {
        var random = SeededGenerator(label: "http fuzz")
        let pieces = [
            "GET ", "POST ", "/v1/", "?q=", "%", "%zz", " HTTP/1.1", "\r\n", ":", "Content-Length: ", "-1",
            "99999999999999999999", "7", "Transfer-Encoding: chunked", "\u{00}", "é", " ",
        ]
        var outcomes = [0, 0, 0]
        for _ in 0..<20_000 {
            var text = Bool.random(using: &random) ? "GET /v1/health HTTP/1.1\r\n" : ""
            for _ in 0..<Int.random(in: 0...12, using: &random) { text += pieces.randomElement(using: &random)! }
            if Bool.random(using: &random) { text += "\r\n\r\n" }
            var reader = HTTPRequestReader(limits: HTTPLimits(headerBytes: 256, bodyBytes: 64))
            Array(text.utf8).withUnsafeBytes { reader.append($0) }
            do {
                outcomes[try reader.next() == nil ? 0 : 1] += 1
            } catch {
                #expect((400..<600).contains(error.status))
                outcomes[2] += 1
            }
        }
        #expect(outcomes.allSatisfy { $0 > 0 }, "\(outcomes)")
    }

    /// What HTTP/1.1 asks of a server's reading: a target in absolute form is read; a length
    /// given twice differently, or with a sign, and a head whose lines end with a bare LF, are
    /// refused at once (400), not left to time out.
    @Test func requestHeadsAreReadAsHTTPSays() throws {
        func read(_ text: String) throws(HTTPError) -> HTTPRequest? {
            var reader = HTTPRequestReader(limits: HTTPLimits(headerBytes: 1 << 10, bodyBytes: 100))
            Array(text.utf8).withUnsafeBytes { reader.append($0) }
            return try reader.next()
        }
        func refusal(_ text: String) -> HTTPError? {
            do {
                _ = try read(text)
                return nil
            } catch {
                return error
            }
        }
        let absolute = try #require(try read("GET http://rill/v1/query?q=Book&x=1 HTTP/1.1\r\nHost: rill\r\n\r\n"))
        #expect(absolute.path == "/v1/query" && absolute.parameters == ["q": "Book", "x": "1"])
        #expect(try read("GET HTTPS://rill:8080 HTTP/1.1\r\n\r\n")?.path == "/")
        #expect(try read("GET http://rill?q=1 HTTP/1.1\r\n\r\n")?.parameters == ["q": "1"])
        #expect(refusal("GET http:///v1 HTTP/1.1\r\n\r\n")?.status == 400)
        #expect(refusal("GET v1/health HTTP/1.1\r\n\r\n")?.status == 400)

        #expect(
            try read("POST / HTTP/1.1\r\nContent-Length: 2\r\nContent-Length: 2\r\n\r\nab")?.body == Array("ab".utf8))
        let twice = refusal("POST / HTTP/1.1\r\nContent-Length: 2\r\nContent-Length: 3\r\n\r\nabc")
        #expect(twice?.status == 400 && twice?.closesConnection == true, "\(String(describing: twice))")
        #expect(refusal("POST / HTTP/1.1\r\nContent-Length: +2\r\n\r\nab")?.status == 400)
        #expect(refusal("POST / HTTP/1.1\r\nContent-Length: 0x2\r\n\r\nab")?.status == 400)
        let twiceGiven = refusal("GET /v1/query?q=Book&q=Shelf HTTP/1.1\r\n\r\n")
        #expect(twiceGiven?.status == 400 && twiceGiven?.message.contains("'q' is given twice") == true)
        #expect(refusal("GET /v1/query?q=%FF%FE HTTP/1.1\r\n\r\n")?.message.contains("not UTF-8") == true)
        let bareLF = refusal("GET /v1/health HTTP/1.1\nHost: rill\n\n")
        #expect(bareLF?.status == 400 && bareLF?.closesConnection == true, "\(String(describing: bareLF))")
    }
}
