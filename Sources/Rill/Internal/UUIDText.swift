import Foundation

/// A UUID spelled as text, read as `UUID(uuidString:)` reads it.
///
/// The canonical spelling (36 characters: hex digits of either case, with dashes after the 8th,
/// 12th, 16th and 20th) is read here. Foundation on Linux reads every spelling with `sscanf`,
/// several microseconds a UUID, which the daemon paid for every UUID identifier and field of
/// every save. Any other text goes to Foundation, so the answer is Foundation's for every string.
enum UUIDText {
    /// The UUID `text` spells, or nil: `UUID(uuidString: text)`.
    static func uuid(_ text: String) -> UUID? {
        let canonical = text.utf8.withContiguousStorageIfAvailable { canonicalUUID($0) }
        if let canonical, let uuid = canonical { return uuid }
        return UUID(uuidString: text)
    }

    /// The UUID of a canonical spelling; nil for any other text.
    static func canonicalUUID(_ utf8: UnsafeBufferPointer<UInt8>) -> UUID? {
        guard utf8.count == 36, utf8[8] == dash, utf8[13] == dash, utf8[18] == dash, utf8[23] == dash else {
            return nil
        }
        var bytes: uuid_t = (0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0)
        let complete = withUnsafeMutableBytes(of: &bytes) { out -> Bool in
            var position = 0
            for index in 0..<16 {
                if position == 8 || position == 13 || position == 18 || position == 23 { position += 1 }
                guard let high = hexValue(utf8[position]), let low = hexValue(utf8[position + 1]) else { return false }
                out[index] = high << 4 | low
                position += 2
            }
            return true
        }
        return complete ? UUID(uuid: bytes) : nil
    }

    /// Appends `uuid.uuidString`'s UTF-8 (upper-case hex, dashes after the 8th, 12th, 16th and
    /// 20th digit) to `output`, without Foundation's `sprintf`.
    static func append(_ uuid: UUID, to output: inout [UInt8]) {
        let digits: StaticString = "0123456789ABCDEF"
        withUnsafeBytes(of: uuid.uuid) { bytes in
            digits.withUTF8Buffer { hex in
                for index in 0..<16 {
                    if index == 4 || index == 6 || index == 8 || index == 10 { output.append(dash) }
                    output.append(hex[Int(bytes[index] >> 4)])
                    output.append(hex[Int(bytes[index] & 0x0F)])
                }
            }
        }
    }

    private static let dash = UInt8(ascii: "-")

    /// The value of an ASCII hex digit of either case.
    @inline(__always)
    private static func hexValue(_ byte: UInt8) -> UInt8? {
        switch byte {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): byte &- UInt8(ascii: "0")
        case UInt8(ascii: "a")...UInt8(ascii: "f"): byte &- UInt8(ascii: "a") &+ 10
        case UInt8(ascii: "A")...UInt8(ascii: "F"): byte &- UInt8(ascii: "A") &+ 10
        default: nil
        }
    }
}
