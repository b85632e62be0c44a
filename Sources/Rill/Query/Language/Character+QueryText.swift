import Foundation

// ASCII is answered from the code point: Unicode property lookups cost more than the rest of
// lexing a short query.
extension Character {
    var isASCIIDigit: Bool { asciiValue.map { (0x30...0x39).contains($0) } ?? false }

    var isASCIIHexDigit: Bool {
        guard let byte = asciiValue else { return false }
        return (0x30...0x39).contains(byte) || (0x41...0x46).contains(byte) || (0x61...0x66).contains(byte)
    }

    var isASCIILetter: Bool {
        guard let byte = asciiValue else { return false }
        return (0x41...0x5A).contains(byte) || (0x61...0x7A).contains(byte)
    }

    var startsName: Bool {
        guard asciiValue != nil else { return isLetter }
        return isASCIILetter || self == "_"
    }

    var continuesName: Bool {
        guard asciiValue != nil else { return isLetter || isNumber }
        return isASCIILetter || isASCIIDigit || self == "_"
    }

    /// `isWhitespace`, answered from the code point for ASCII.
    var isSpace: Bool {
        guard let byte = asciiValue else { return isWhitespace }
        return byte == 0x20 || (0x09...0x0D).contains(byte)
    }
}

/// Source text as quoted in a message: on one line, and shortened when long.
func sourceExcerpt(_ text: String) -> String {
    // Short ASCII text on one line, the usual token, is quoted as it is: the parser quotes the
    // tokens it reads for the messages it may need.
    let utf8 = text.utf8
    if utf8.count <= 24, utf8.allSatisfy({ $0 < 0x80 && !(0x0A...0x0D).contains($0) }) { return text }
    let line = String(text.map { $0.isNewline ? " " : $0 })
    return line.count > 24 ? line.prefix(20) + "…" : line
}
