import Foundation

/// Bounds-checked reads from record bytes.
///
/// Every method validates offsets against the buffer and throws `RecordError` instead of trapping, because the bytes
/// may come from disk or the network and must never crash the process. Offsets are absolute positions in `bytes`.
struct RecordReader {
    /// The whole record, including the version byte.
    let bytes: UnsafeRawBufferPointer

    init(_ bytes: UnsafeRawBufferPointer) {
        self.bytes = bytes
    }

    // MARK: - Scalars

    /// The byte at `offset`.
    @inline(__always)
    func byte(at offset: Int) throws(RecordError) -> UInt8 {
        guard offset >= 0, offset < bytes.count else { throw Self.truncated(at: offset) }
        return bytes[offset]
    }

    /// Checks that `size` bytes are available at `offset`; returns the offset just past them.
    func require(_ size: Int, at offset: Int) throws(RecordError) -> Int {
        guard offset >= 0, size <= bytes.count &- offset else { throw Self.truncated(at: offset, size: size) }
        return offset + size
    }

    // Errors are built out of line so the hot readers above stay small enough to inline.
    @inline(never)
    private static func truncated(at offset: Int, size: Int? = nil) -> RecordError {
        if let size {
            return RecordError(
                .truncated, "the record ends inside a \(size)-byte payload starting at byte \(offset)", offset: offset)
        }
        return RecordError(.truncated, "the record ends before byte \(offset)", offset: offset)
    }

    /// Reads a LEB128 varint; returns its value and the offset just past it.
    @inline(__always)
    func varint(at offset: Int) throws(RecordError) -> (value: UInt64, next: Int) {
        let first = try byte(at: offset)
        if first < 0x80 { return (UInt64(first), offset + 1) }
        return try longVarint(at: offset)
    }

    /// The general case of `varint(at:)`, for values of 128 and above.
    private func longVarint(at offset: Int) throws(RecordError) -> (value: UInt64, next: Int) {
        var result: UInt64 = 0
        var shift: UInt64 = 0
        var position = offset
        while true {
            let byte = try self.byte(at: position)
            position += 1
            let group = UInt64(byte & 0x7F)
            if shift == 63, group > 1 {
                throw RecordError(.invalidVarint, "varint overflows 64 bits", offset: offset)
            }
            result |= group << shift
            if byte & 0x80 == 0 {
                if byte == 0 {
                    throw RecordError(.invalidVarint, "varint has a redundant trailing zero group", offset: offset)
                }
                return (result, position)
            }
            shift += 7
            if shift > 63 {
                throw RecordError(.invalidVarint, "varint is longer than ten bytes", offset: offset)
            }
        }
    }

    /// Reads a little-endian 32-bit payload at `offset`.
    func uint32(at offset: Int) throws(RecordError) -> UInt32 {
        _ = try require(4, at: offset)
        return UInt32(littleEndian: bytes.loadUnaligned(fromByteOffset: offset, as: UInt32.self))
    }

    /// Reads a little-endian 64-bit payload at `offset`.
    func uint64(at offset: Int) throws(RecordError) -> UInt64 {
        _ = try require(8, at: offset)
        return UInt64(littleEndian: bytes.loadUnaligned(fromByteOffset: offset, as: UInt64.self))
    }

    /// Reads the 16 bytes of a UUID payload at `offset`.
    func uuid(at offset: Int) throws(RecordError) -> UUID {
        _ = try require(16, at: offset)
        return UUID(uuid: bytes.loadUnaligned(fromByteOffset: offset, as: uuid_t.self))
    }

    // MARK: - Length-prefixed payloads

    /// Reads a varint byte count at `offset` and returns the range of the bytes it announces.
    @inline(__always)
    func lengthPrefixed(at offset: Int) throws(RecordError) -> Range<Int> {
        let (count, start) = try varint(at: offset)
        guard count <= UInt64(bytes.count &- start) else {
            throw RecordError(
                .truncated, "a \(count)-byte payload does not fit in the record", offset: offset)
        }
        return start..<(start + Int(count))
    }

    /// Decodes `range` as UTF-8, rejecting invalid sequences rather than repairing them.
    func string(in range: Range<Int>) throws(RecordError) -> String {
        let utf8 = UnsafeRawBufferPointer(rebasing: bytes[range]).assumingMemoryBound(to: UInt8.self)
        // Short ASCII, most keys and many values, is valid without the full check.
        guard Self.isShortASCII(utf8) || Self.isValidUTF8(utf8) else {
            throw RecordError(.invalidUTF8, "text is not valid UTF-8", offset: range.lowerBound)
        }
        return String(decoding: utf8, as: UTF8.self)
    }

    /// Throws unless `range` is valid UTF-8.
    @inline(__always)
    func validateUTF8(in range: Range<Int>) throws(RecordError) {
        let utf8 = UnsafeRawBufferPointer(rebasing: bytes[range]).assumingMemoryBound(to: UInt8.self)
        guard Self.isShortASCII(utf8) || Self.isValidUTF8(utf8) else {
            throw RecordError(.invalidUTF8, "text is not valid UTF-8", offset: range.lowerBound)
        }
    }

    /// Whether `utf8` is at most 16 bytes of ASCII, the usual shape of a field name; checked inline, with two
    /// overlapping 8-byte loads when there are at least 8 bytes.
    @inline(__always)
    static func isShortASCII(_ utf8: UnsafeBufferPointer<UInt8>) -> Bool {
        let count = utf8.count
        guard count <= 16, let base = utf8.baseAddress else { return count == 0 }
        if count >= 8 {
            let head = UnsafeRawPointer(base).loadUnaligned(as: UInt64.self)
            let tail = UnsafeRawPointer(base + (count &- 8)).loadUnaligned(as: UInt64.self)
            return (head | tail) & 0x8080_8080_8080_8080 == 0
        }
        var bits: UInt8 = 0
        for index in 0..<count { bits |= base[index] }
        return bits < 0x80
    }

    /// Strict UTF-8 validation (no overlong forms, surrogates or code points past U+10FFFF).
    ///
    /// Hand-written because the standard library's validating initialiser goes through unspecialised generic code
    /// that costs more than the rest of reading a short string; ASCII runs are skipped eight bytes at a time.
    static func isValidUTF8(_ utf8: UnsafeBufferPointer<UInt8>) -> Bool {
        guard let base = utf8.baseAddress else { return true }
        let count = utf8.count
        var index = 0
        while index < count {
            if count - index >= 8 {
                let word = UnsafeRawPointer(base + index).loadUnaligned(as: UInt64.self)
                if word & 0x8080_8080_8080_8080 == 0 {
                    index += 8
                    continue
                }
            }
            let lead = base[index]
            if lead < 0x80 {
                index += 1
                continue
            }
            func continuation(_ offset: Int) -> UInt8? {
                guard index + offset < count else { return nil }
                let byte = base[index + offset]
                return byte & 0xC0 == 0x80 ? byte : nil
            }
            switch lead {
            case 0xC2...0xDF:
                guard continuation(1) != nil else { return false }
                index += 2
            case 0xE0...0xEF:
                guard let second = continuation(1), continuation(2) != nil else { return false }
                if lead == 0xE0, second < 0xA0 { return false }
                if lead == 0xED, second >= 0xA0 { return false }
                index += 3
            case 0xF0...0xF4:
                guard let second = continuation(1), continuation(2) != nil, continuation(3) != nil else {
                    return false
                }
                if lead == 0xF0, second < 0x90 { return false }
                if lead == 0xF4, second >= 0x90 { return false }
                index += 4
            default:
                return false
            }
        }
        return true
    }

    /// Whether the bytes in `range` equal `text`'s UTF-8.
    ///
    /// Compared inline eight bytes at a time (the last word overlapping the previous one), with narrower loads for
    /// keys under eight bytes: keys are short, and calling `memcmp` costs more.
    @inline(__always)
    func bytes(in range: Range<Int>, equal text: UnsafeBufferPointer<UInt8>) -> Bool {
        let count = range.count
        guard count == text.count else { return false }
        guard let textBase = text.baseAddress, let base = bytes.baseAddress else { return true }
        let left = base + range.lowerBound
        let right = UnsafeRawPointer(textBase)
        if count >= 8 {
            var index = 0
            while index &+ 8 < count {
                guard
                    left.loadUnaligned(fromByteOffset: index, as: UInt64.self)
                        == right.loadUnaligned(fromByteOffset: index, as: UInt64.self)
                else { return false }
                index &+= 8
            }
            return left.loadUnaligned(fromByteOffset: count &- 8, as: UInt64.self)
                == right.loadUnaligned(fromByteOffset: count &- 8, as: UInt64.self)
        }
        if count >= 4 {
            return left.loadUnaligned(as: UInt32.self) == right.loadUnaligned(as: UInt32.self)
                && left.loadUnaligned(fromByteOffset: count &- 4, as: UInt32.self)
                    == right.loadUnaligned(fromByteOffset: count &- 4, as: UInt32.self)
        }
        for index in 0..<count where left.load(fromByteOffset: index, as: UInt8.self) != textBase[index] {
            return false
        }
        return true
    }

    // MARK: - Structure

    /// Walks the value starting at `offset` without materialising it; returns the offset just past it.
    ///
    /// Checks tags, varints, bounds and nesting but not the UTF-8 inside strings, which is validated when a string
    /// is actually read. `depth` is the nesting level of the value, for the `RecordFormat.maxDepth` limit.
    func skipValue(at offset: Int, depth: Int) throws(RecordError) -> Int {
        let tag = try byte(at: offset)
        let payload = offset + 1
        switch tag {
        case RecordFormat.Tag.null, RecordFormat.Tag.falseValue, RecordFormat.Tag.trueValue:
            return payload
        case RecordFormat.Tag.signed, RecordFormat.Tag.unsigned:
            return try varint(at: payload).next
        case RecordFormat.Tag.float:
            return try require(4, at: payload)
        case RecordFormat.Tag.double, RecordFormat.Tag.date:
            return try require(8, at: payload)
        case RecordFormat.Tag.uuid:
            return try require(16, at: payload)
        case RecordFormat.Tag.string, RecordFormat.Tag.data, RecordFormat.Tag.url, RecordFormat.Tag.decimal:
            return try lengthPrefixed(at: payload).upperBound
        case RecordFormat.Tag.mapBegin:
            if depth >= RecordFormat.recursionDepth { return try skipNested(at: offset, depth: depth) }
            try checkDepth(depth + 1, at: offset)
            var position = payload
            while true {
                if try byte(at: position) == RecordFormat.Tag.end { return position + 1 }
                let key = try keyRange(at: position)
                position = try skipValue(at: key.upperBound, depth: depth + 1)
            }
        case RecordFormat.Tag.arrayBegin:
            if depth >= RecordFormat.recursionDepth { return try skipNested(at: offset, depth: depth) }
            try checkDepth(depth + 1, at: offset)
            var position = payload
            while true {
                if try byte(at: position) == RecordFormat.Tag.end { return position + 1 }
                position = try skipValue(at: position, depth: depth + 1)
            }
        case RecordFormat.Tag.end:
            throw RecordError(.invalidStructure, "an end byte where a value was expected", offset: offset)
        default:
            throw RecordError(.unknownTag, RecordFormat.Tag.name(tag), offset: offset)
        }
    }

    /// `skipValue(at:depth:)` of the container at `offset`, with a loop and a stack of its own
    /// instead of recursion: what the open containers are (true for a map), innermost last.
    private func skipNested(at offset: Int, depth: Int) throws(RecordError) -> Int {
        var openMaps: [Bool] = []
        var position = offset
        var tag = try byte(at: position)
        while true {
            if tag == RecordFormat.Tag.mapBegin || tag == RecordFormat.Tag.arrayBegin {
                try checkDepth(depth + openMaps.count + 1, at: position)
                openMaps.append(tag == RecordFormat.Tag.mapBegin)
                position += 1
            } else {
                // Not a container: no recursion.
                position = try skipValue(at: position, depth: depth + openMaps.count)
            }
            while try byte(at: position) == RecordFormat.Tag.end {
                position += 1
                openMaps.removeLast()
                if openMaps.isEmpty { return position }
            }
            if openMaps[openMaps.count - 1] { position = try keyRange(at: position).upperBound }
            tag = try byte(at: position)
        }
    }

    /// `skipValue(at:depth:)` with the common scalar tags handled inline.
    @inline(__always)
    func skipEntryValue(at offset: Int, depth: Int) throws(RecordError) -> Int {
        let tag = try byte(at: offset)
        switch tag {
        case RecordFormat.Tag.signed, RecordFormat.Tag.unsigned:
            return try varint(at: offset + 1).next
        case RecordFormat.Tag.double, RecordFormat.Tag.date:
            return try require(8, at: offset + 1)
        case RecordFormat.Tag.string:
            return try lengthPrefixed(at: offset + 1).upperBound
        default:
            return try skipValue(at: offset, depth: depth)
        }
    }

    /// Reads the map key at `offset` (a string tag and its text); returns the range of the key's UTF-8.
    @inline(__always)
    func keyRange(at offset: Int) throws(RecordError) -> Range<Int> {
        let tag = try byte(at: offset)
        guard tag == RecordFormat.Tag.string else {
            throw RecordError(
                .invalidStructure, "expected a map key or an end byte but found \(RecordFormat.Tag.name(tag))",
                offset: offset)
        }
        return try lengthPrefixed(at: offset + 1)
    }

    /// Throws once nesting exceeds the limit.
    func checkDepth(_ depth: Int, at offset: Int) throws(RecordError) {
        if depth > RecordFormat.maxDepth {
            throw RecordError(
                .nestingTooDeep, "containers are nested more than \(RecordFormat.maxDepth) levels deep",
                offset: offset)
        }
    }

    /// Checks the version byte; returns the offset of the top-level value.
    func checkVersion() throws(RecordError) -> Int {
        let version = try byte(at: 0)
        guard version == RecordFormat.version else {
            throw RecordError(.unsupportedVersion, "unsupported format version \(version)", offset: 0)
        }
        return 1
    }

    /// Throws unless the top-level value ends exactly at the end of the bytes.
    func checkEnd(_ end: Int) throws(RecordError) {
        guard end == bytes.count else {
            throw RecordError(
                .trailingBytes, "\(bytes.count - end) bytes follow the top-level value", offset: end)
        }
    }
}
