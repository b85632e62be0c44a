import Foundation

/// Reads Rill's binary layouts (log entries), throwing on truncated or malformed input instead of trapping.
struct ByteReader {
    struct Malformed: Error, CustomStringConvertible {
        let offset: Int
        let what: String
        var description: String { "malformed data at byte \(offset): \(what)" }
    }

    let buffer: UnsafeRawBufferPointer
    private(set) var offset: Int

    init(_ buffer: UnsafeRawBufferPointer, offset: Int = 0) {
        self.buffer = buffer
        self.offset = offset
    }

    var isAtEnd: Bool { offset >= buffer.count }

    mutating func readByte() throws -> UInt8 {
        guard offset < buffer.count else { throw Malformed(offset: offset, what: "unexpected end") }
        defer { offset += 1 }
        return buffer[offset]
    }

    mutating func readVarint() throws -> UInt64 {
        var result: UInt64 = 0
        var shift: UInt64 = 0
        while true {
            let byte = try readByte()
            guard shift < 64 else { throw Malformed(offset: offset, what: "varint too long") }
            result |= UInt64(byte & 0x7F) << shift
            if byte < 0x80 { return result }
            shift += 7
        }
    }

    mutating func readBytes(_ count: Int) throws -> UnsafeRawBufferPointer {
        guard count >= 0, count <= buffer.count - offset else {
            throw Malformed(offset: offset, what: "\(count) bytes past the end")
        }
        defer { offset += count }
        return UnsafeRawBufferPointer(rebasing: buffer[offset..<offset + count])
    }

    mutating func readBlob() throws -> UnsafeRawBufferPointer {
        let count = try readVarint()
        guard count <= UInt64(Int.max) else { throw Malformed(offset: offset, what: "length too large") }
        return try readBytes(Int(count))
    }

    mutating func readString() throws -> String {
        let blob = try readBlob()
        guard let string = String(validating: blob, as: UTF8.self) else {
            throw Malformed(offset: offset, what: "invalid UTF-8")
        }
        return string
    }

    mutating func readDouble() throws -> Double {
        let raw = try readBytes(8)
        var bits: UInt64 = 0
        for (index, byte) in raw.enumerated() { bits |= UInt64(byte) << (8 * UInt64(index)) }
        return Double(bitPattern: bits)
    }
}
