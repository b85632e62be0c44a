/// A key of the full-screen `rill watch`, read from the terminal's bytes.
enum WatchKey: Equatable {
    case nextPage, previousPage, firstPage, lastPage, lineDown, lineUp, redraw, quit

    /// The keys in `bytes` (what one read of the terminal gave), in order; other bytes are
    /// ignored. Space, `j`, `f`, PgDn: next page; `b`, `k`, PgUp: previous; `g`, Home: first;
    /// `G`, End: last; ↓ and ↑: a line; Ctrl-L: redraw; `q`: quit.
    static func keys(in bytes: [UInt8]) -> [WatchKey] {
        var keys: [WatchKey] = []
        var index = 0
        while index < bytes.count {
            let byte = bytes[index]
            index += 1
            guard byte == 0x1B else {
                if let key = plain[byte] { keys.append(key) }
                continue
            }
            // ESC [ … final, or ESC O final (the application cursor keys).
            guard index < bytes.count, bytes[index] == UInt8(ascii: "[") || bytes[index] == UInt8(ascii: "O") else {
                continue
            }
            let start = index + 1
            var end = start
            while end < bytes.count, !(0x40...0x7E).contains(bytes[end]) { end += 1 }
            guard end < bytes.count else { break }
            if let key = sequences[String(decoding: bytes[start...end], as: UTF8.self)] { keys.append(key) }
            index = end + 1
        }
        return keys
    }

    private static let plain: [UInt8: WatchKey] = [
        UInt8(ascii: " "): .nextPage, UInt8(ascii: "j"): .nextPage, UInt8(ascii: "f"): .nextPage,
        UInt8(ascii: "b"): .previousPage, UInt8(ascii: "k"): .previousPage,
        UInt8(ascii: "g"): .firstPage, UInt8(ascii: "G"): .lastPage,
        UInt8(ascii: "q"): .quit, UInt8(ascii: "Q"): .quit, 0x0C: .redraw,
    ]

    /// What follows `ESC [` (or `ESC O`): PgDn, PgUp, Home and End as the terminals send them.
    private static let sequences: [String: WatchKey] = [
        "6~": .nextPage, "5~": .previousPage,
        "H": .firstPage, "1~": .firstPage, "7~": .firstPage,
        "F": .lastPage, "4~": .lastPage, "8~": .lastPage,
        "B": .lineDown, "A": .lineUp,
    ]
}
