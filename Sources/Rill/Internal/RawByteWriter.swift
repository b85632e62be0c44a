/// Writes into memory of a known size (for example space reserved in an LMDB page). Writing
/// past the end is a programming error: sizes are computed exactly beforehand.
struct RawByteWriter {
    private let buffer: UnsafeMutableRawBufferPointer
    private(set) var offset = 0

    init(_ buffer: UnsafeMutableRawBufferPointer) { self.buffer = buffer }

    mutating func append(_ byte: UInt8) {
        precondition(offset < buffer.count, "write past the end of a reserved buffer")
        buffer[offset] = byte
        offset += 1
    }

    mutating func append<C: Collection>(_ bytes: C) where C.Element == UInt8 {
        precondition(bytes.count <= buffer.count - offset, "write past the end of a reserved buffer")
        let done = bytes.withContiguousStorageIfAvailable { source -> Bool in
            if let base = source.baseAddress {
                (buffer.baseAddress! + offset).copyMemory(from: base, byteCount: source.count)
            }
            return true
        }
        if done == nil {
            for (index, byte) in bytes.enumerated() { buffer[offset + index] = byte }
        }
        offset += bytes.count
    }

    mutating func appendVarint(_ value: UInt64) {
        var value = value
        while value >= 0x80 {
            append(UInt8(truncatingIfNeeded: value) | 0x80)
            value >>= 7
        }
        append(UInt8(value))
    }

    mutating func appendLittleEndian(_ value: UInt64) {
        withUnsafeBytes(of: value.littleEndian) { append($0) }
    }
}
