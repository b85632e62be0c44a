import RillWorkloads

/// The benchmark's side of `rill-bench serve`'s sockets, on bytes: its writers and subscribers
/// share the machine's cores with the daemon, so they spend as little as they can on
/// formatting requests and reading responses and events.
extension ServeBenchmark {
    /// The events of a Server-Sent Event stream, read line by line as they come.
    struct EventReader {
        enum Event { case change(UInt64), reset, results, other }

        private var pending: [UInt8] = []
        private var name: [UInt8] = []
        private var id: UInt64 = 0

        /// Reads `bytes`, the next part of the stream, and calls `handle` for each event they end.
        mutating func read(_ bytes: UnsafeRawBufferPointer, _ handle: (Event) -> Void) {
            pending.append(contentsOf: bytes)
            var start = 0
            while let newline = pending[start...].firstIndex(of: UInt8(ascii: "\n")) {
                let line = pending[start..<newline]
                start = newline + 1
                if line.isEmpty {
                    if id > 0 { handle(event()) }
                    (name, id) = ([], 0)
                } else if let value = Self.value(of: line, named: "event: ") {
                    name = Array(value)
                } else if let value = Self.value(of: line, named: "id: ") {
                    id = Self.number(value) ?? 0
                }
            }
            pending.removeFirst(start)
        }

        private func event() -> Event {
            switch name {
            case Array("change".utf8): .change(id)
            case Array("reset".utf8): .reset
            case Array("results".utf8): .results
            default: .other
            }
        }

        /// What follows `prefix` in `line`, when `line` starts with it.
        private static func value(of line: ArraySlice<UInt8>, named prefix: StaticString) -> ArraySlice<UInt8>? {
            let count = prefix.utf8CodeUnitCount
            guard line.count >= count else { return nil }
            let matches = prefix.withUTF8Buffer { line.prefix(count).elementsEqual($0) }
            return matches ? line.dropFirst(count) : nil
        }

        /// The number the leading digits of `bytes` spell, nil when there are none.
        static func number<Bytes: Collection<UInt8>>(_ bytes: Bytes) -> UInt64? {
            var value: UInt64 = 0
            var digits = 0
            for byte in bytes {
                guard byte >= UInt8(ascii: "0"), byte <= UInt8(ascii: "9") else { break }
                value = value &* 10 &+ UInt64(byte - UInt8(ascii: "0"))
                digits += 1
            }
            return digits > 0 ? value : nil
        }
    }

    /// One writer's save requests: updates of random items to random quantities and prices.
    struct SaveRequests {
        private let ids: [[UInt8]]
        private let head: [UInt8]
        private var random: SeededGenerator
        private var request: [UInt8] = []
        private var body: [UInt8] = []

        init(ids: [[UInt8]], header: String, seed: UInt64) {
            self.ids = ids
            head = Array("POST /v1/save HTTP/1.1\r\nHost: rill\r\n\(header)Content-Length: ".utf8)
            random = SeededGenerator(seed: seed)
        }

        /// The next request's bytes.
        mutating func next() -> [UInt8] {
            let cents = Int.random(in: 0..<10_000, using: &random)
            body.removeAll(keepingCapacity: true)
            body.append(contentsOf: #"[{"op":"update","entity":"Item","record":{"id":""#.utf8)
            body.append(contentsOf: ids[Int.random(in: 0..<ids.count, using: &random)])
            body.append(contentsOf: #"","quantity":"#.utf8)
            body.append(contentsOf: String(Int.random(in: 0..<1000, using: &random)).utf8)
            body.append(contentsOf: #","price":"#.utf8)
            body.append(contentsOf: "\(cents / 100).\(cents % 100 < 10 ? "0" : "")\(cents % 100)".utf8)
            body.append(contentsOf: "}}]".utf8)
            request.removeAll(keepingCapacity: true)
            request.append(contentsOf: head)
            request.append(contentsOf: String(body.count).utf8)
            request.append(contentsOf: "\r\n\r\n".utf8)
            request.append(contentsOf: body)
            return request
        }
    }

    /// The sequence number a save's response acknowledges (its `"seq":` field).
    static func acknowledgedSequence(in response: UnsafeRawBufferPointer) -> UInt64? {
        let key = Array(#""seq":"#.utf8)
        guard response.count >= key.count else { return nil }
        for start in 0...(response.count - key.count)
        where response[start] == key[0] && response[start..<start + key.count].elementsEqual(key) {
            return EventReader.number(response[(start + key.count)...])
        }
        return nil
    }
}
