import Foundation

/// Reading a record's bytes for `RecordMatcher`: finding the fields the filter reads, and the
/// values at their paths, without allocating.
extension RecordMatcher {
    /// A value read from the record bytes, as far as the matcher looks at it.
    enum StoredValue {
        /// Null, or a field that is not there.
        case null
        case bool(Bool)
        /// An integer, Float or Double, as stored.
        case number(Number)
        /// The UTF-8 of a string or URL (valid; not yet known to be ASCII).
        case text(Range<Int>, isURL: Bool)
        /// A date's `timeIntervalSinceReferenceDate`.
        case date(Double)
        case decimal
        case uuid
        /// Data, an array or a map: comparable with no constant the matcher compiles.
        case other
        /// The bytes could not be read.
        case unknown
    }

    /// What `locate` learned of the key at one ordinal of the records before: the first bytes
    /// of its encoding (its tag, its one-byte length, its text: 16 bytes at most) and the slot
    /// it names.
    ///
    /// The records of one model mostly have the same keys in the same order. A key with the
    /// same bytes at the same ordinal is then known to be sound and known to name that slot,
    /// after one or two word compares, where learning it validates its text and compares it
    /// with every slot's name.
    struct KeyMemo {
        /// Bytes 0..<8 of the encoding, little-endian, those past its end zero.
        var head: UInt64 = 0
        /// Selects the bytes of `head` that belong to the encoding.
        var mask: UInt64 = 0
        /// Bytes `size - 8 ..< size` of the encoding when `size > 8`.
        var tail: UInt64 = 0
        /// The size of the encoding; 0 when nothing is known.
        var size = 0
        /// The slot the key names; -1 for none.
        var slot = -1
    }

    /// How many keys of a record `locate` remembers.
    static let memoCapacity = 32

    /// Sets `slots[i]` to the offset of the value of the top-level field `names[ranges[i]]`, or
    /// to `RecordReader.missingValue` when the record lacks it (`ranges` may hold more after the
    /// slots' names). `memo` holds what the calls before learned of their records' keys (all
    /// empty at first; see `KeyMemo`).
    ///
    /// Checks what `RecordValue(record:fields:)` checks, so that the matcher decides only the
    /// records the `RecordValue` path reads without an error: the structure of the whole record,
    /// the UTF-8 of its field names and of all the text inside the fields the filter reads.
    /// False when a check fails, when the record is not a map, or when it names a field the
    /// filter reads twice (both are read then).
    @inline(__always)
    static func locate(
        names: UnsafeBufferPointer<UInt8>, ranges: UnsafeBufferPointer<Range<Int>>, in reader: RecordReader,
        slots: UnsafeMutableBufferPointer<Int>, memo: UnsafeMutableBufferPointer<KeyMemo>
    ) -> Bool {
        let bytes = reader.bytes
        let count = bytes.count
        // The version byte, then a map.
        guard count >= 3, let base = bytes.baseAddress, bytes[0] == RecordFormat.version,
            bytes[1] == RecordFormat.Tag.mapBegin
        else {
            return false
        }
        // The 8 bytes at `offset`, little-endian (`offset + 8 <= count`).
        @inline(__always)
        func word(at offset: Int) -> UInt64 {
            UInt64(littleEndian: base.loadUnaligned(fromByteOffset: offset, as: UInt64.self))
        }
        // One slot is the usual case: a store, not a call to `memset`.
        if slots.count == 1 {
            slots[0] = RecordReader.missingValue
        } else {
            for index in 0..<slots.count { slots[index] = RecordReader.missingValue }
        }
        var position = 2
        var ordinal = 0
        let memoBase = memo.baseAddress.unsafelyUnwrapped
        let memoCount = memo.count
        do {
            while true {
                let value: Int
                let slot: Int
                // The key the records before had at this ordinal, read with whole words (8 bytes
                // from it are in the record): its tag is a string's, so the map's end never
                // passes for it.
                if ordinal < memoCount, position &+ 8 <= count, case let known = memoBase + ordinal,
                    case let size = known.pointee.size, size != 0,
                    word(at: position) & known.pointee.mask == known.pointee.head,
                    size <= 8 || (size <= count &- position && word(at: position &+ size &- 8) == known.pointee.tail)
                {
                    value = position &+ size
                    slot = known.pointee.slot
                } else {
                    guard position < count else { return false }
                    let tag = bytes[position]
                    if tag == RecordFormat.Tag.end { break }
                    // A key: its tag, a one-byte length (names under 128 bytes), its text.
                    guard tag == RecordFormat.Tag.string, position + 1 < count else { return false }
                    let length = Int(bytes[position + 1])
                    let key = (position + 2)..<(position + 2 + length)
                    guard length < 0x80, key.upperBound <= count else { return false }
                    try reader.validateUTF8(in: key)
                    value = key.upperBound
                    var named = -1
                    for index in 0..<slots.count where ranges[index].count == length {
                        if reader.bytes(in: key, equal: UnsafeBufferPointer(rebasing: names[ranges[index]])) {
                            named = index
                            break
                        }
                    }
                    slot = named
                    if position &+ 8 <= count, ordinal < memoCount {
                        memo[ordinal] = learn(at: position, size: length &+ 2, slot: slot, word: word)
                    }
                }
                ordinal &+= 1
                // The value, skipped inline for the common scalars.
                guard value < count else { return false }
                let valueTag = base.load(fromByteOffset: value, as: UInt8.self)
                switch valueTag {
                case RecordFormat.Tag.signed, RecordFormat.Tag.unsigned:
                    position = try skipVarint(at: value &+ 1, in: reader)
                case RecordFormat.Tag.double, RecordFormat.Tag.date:
                    position = value &+ 9
                    guard position <= count else { return false }
                case RecordFormat.Tag.string where value &+ 1 < count && bytes[value &+ 1] < 0x80:
                    position = value &+ 2 &+ Int(bytes[value &+ 1])
                    guard position <= count else { return false }
                case RecordFormat.Tag.null, RecordFormat.Tag.falseValue, RecordFormat.Tag.trueValue:
                    position = value &+ 1
                default:
                    position = try reader.skipValue(at: value, depth: 1)
                }
                guard slot >= 0 else { continue }
                guard slots[slot] == RecordReader.missingValue else { return false }
                slots[slot] = value
                // Only text and containers hold anything more to check; short ASCII text inline.
                if valueTag == RecordFormat.Tag.string, value &+ 1 < count,
                    case let length = Int(bytes[value &+ 1]),
                    length <= 16, value &+ 2 &+ length <= count,
                    RecordReader.isShortASCII(
                        UnsafeBufferPointer(
                            start: base.assumingMemoryBound(to: UInt8.self) + (value &+ 2), count: length))
                {
                    continue
                }
                switch valueTag {
                case RecordFormat.Tag.string, RecordFormat.Tag.url, RecordFormat.Tag.decimal,
                    RecordFormat.Tag.mapBegin, RecordFormat.Tag.arrayBegin:
                    _ = try validate(at: value, in: reader)
                default:
                    break
                }
            }
        } catch {
            return false
        }
        return position + 1 == count
    }

    /// The memo of the sound key whose encoding of `size` bytes starts at `offset`; an empty
    /// one when it is longer than 16 bytes.
    @inline(__always)
    private static func learn(
        at offset: Int, size: Int, slot: Int, word: (Int) -> UInt64
    ) -> KeyMemo {
        guard size <= 16 else { return KeyMemo() }
        let mask: UInt64 = size >= 8 ? ~0 : (1 << UInt64(size &* 8)) &- 1
        return KeyMemo(
            head: word(offset) & mask, mask: mask, tail: size > 8 ? word(offset &+ size &- 8) : 0, size: size,
            slot: slot)
    }

    /// The offset past the varint at `offset`; throws where `RecordReader.varint` would: more
    /// than ten bytes, bits past 64, a redundant trailing zero group.
    @inline(__always)
    private static func skipVarint(at offset: Int, in reader: RecordReader) throws(RecordError) -> Int {
        let bytes = reader.bytes
        // The usual varint, within the eight bytes from `offset`: its last byte is the first
        // whose high bit is clear, found in one word; it must not be a zero group (unless alone).
        if offset >= 0, offset &+ 8 <= bytes.count {
            let word = UInt64(littleEndian: bytes.loadUnaligned(fromByteOffset: offset, as: UInt64.self))
            let ends = ~word & 0x8080_8080_8080_8080
            if ends != 0 {
                let length = ends.trailingZeroBitCount &>> 3 &+ 1
                if length == 1 || (word &>> UInt64((length &- 1) &* 8)) & 0xFF != 0 { return offset &+ length }
            }
        }
        var position = offset
        let limit = min(bytes.count, offset &+ 10)
        while position < limit {
            let byte = bytes[position]
            position &+= 1
            if byte & 0x80 == 0 {
                let length = position &- offset
                guard length == 1 || (byte != 0 && (length < 10 || byte <= 1)) else { break }
                return position
            }
        }
        // Let the reader report the error.
        return try reader.varint(at: offset).next
    }

    /// Checks the UTF-8 of every string, URL, decimal and map key in the value at `offset`,
    /// whose structure is known to be sound; returns the offset just past the value.
    private static func validate(at offset: Int, in reader: RecordReader) throws(RecordError) -> Int {
        let tag = try reader.byte(at: offset)
        switch tag {
        case RecordFormat.Tag.string, RecordFormat.Tag.url, RecordFormat.Tag.decimal:
            let range = try reader.lengthPrefixed(at: offset + 1)
            try reader.validateUTF8(in: range)
            return range.upperBound
        case RecordFormat.Tag.mapBegin:
            var position = offset + 1
            while try reader.byte(at: position) != RecordFormat.Tag.end {
                let key = try reader.keyRange(at: position)
                try reader.validateUTF8(in: key)
                position = try validate(at: key.upperBound, in: reader)
            }
            return position + 1
        case RecordFormat.Tag.arrayBegin:
            var position = offset + 1
            while try reader.byte(at: position) != RecordFormat.Tag.end {
                position = try validate(at: position, in: reader)
            }
            return position + 1
        default:
            return try reader.skipValue(at: offset, depth: 1)
        }
    }

    /// The value at a field path, read as `QueryEvaluator.read` reads it: `offset` is that of
    /// its top-level field's value, `path` the range of `ranges` naming the rest (ranges of
    /// `names`). Through maps by the first entry of each name; a path that meets a scalar reads
    /// null, and one that meets an array maps over it, which makes an array (`other`).
    @inline(__always)
    static func value(
        at offset: Int, path: Range<Int>, names: UnsafeBufferPointer<UInt8>,
        ranges: UnsafeBufferPointer<Range<Int>>, in reader: RecordReader
    ) -> StoredValue {
        guard offset != RecordReader.missingValue else { return .null }
        do {
            if path.isEmpty { return try scalar(at: offset, in: reader) }
            switch try end(of: path, at: offset, names: names, ranges: ranges, in: reader) {
            case .value(let offset): return try scalar(at: offset, in: reader)
            case .null: return .null
            case .array: return .other
            }
        } catch {
            return .unknown
        }
    }

    /// The offset of the value at `path` under the value at `offset`, as `value` reads it:
    /// `RecordReader.missingValue` for a value that reads as null without being stored (missing,
    /// or under one that is not a map); nil when it is unknown (a path through an array, which
    /// the evaluator maps over, or bytes that cannot be read).
    static func offset(
        at offset: Int, path: Range<Int>, names: UnsafeBufferPointer<UInt8>,
        ranges: UnsafeBufferPointer<Range<Int>>, in reader: RecordReader
    ) -> Int? {
        guard offset != RecordReader.missingValue else { return offset }
        switch try? end(of: path, at: offset, names: names, ranges: ranges, in: reader) {
        case .value(let offset)?: return offset
        case .null?: return RecordReader.missingValue
        case .array?, nil: return nil
        }
    }

    /// Where a path ends: at a stored value, at null (a name missing, or a value met that is not a
    /// map), or at an array the path would map over.
    private enum PathEnd {
        case value(Int)
        case null
        case array
    }

    /// Walks `path` from the value at `offset`, through maps by the first entry of each name.
    private static func end(
        of path: Range<Int>, at offset: Int, names: UnsafeBufferPointer<UInt8>,
        ranges: UnsafeBufferPointer<Range<Int>>, in reader: RecordReader
    ) throws(RecordError) -> PathEnd {
        var offset = offset
        for component in path {
            let name = UnsafeBufferPointer(rebasing: names[ranges[component]])
            let tag = try reader.byte(at: offset)
            if tag == RecordFormat.Tag.arrayBegin { return .array }
            guard tag == RecordFormat.Tag.mapBegin else { return .null }
            var position = offset + 1
            var found = RecordReader.missingValue
            while try reader.byte(at: position) != RecordFormat.Tag.end {
                let key = try reader.keyRange(at: position)
                if reader.bytes(in: key, equal: name) {
                    found = key.upperBound
                    break
                }
                position = try reader.skipValue(at: key.upperBound, depth: 1)
            }
            guard found != RecordReader.missingValue else { return .null }
            offset = found
        }
        return .value(offset)
    }

    /// `QueryEvaluator`'s `count` of the value at `offset` (an offset from `offset(at:…)`): the
    /// elements of an array, the entries of a map, the bytes of data, the characters of text (in
    /// ASCII CR LF is one), and 0 for anything else or nothing; nil when unknown (a path through
    /// an array, bytes that cannot be read).
    static func count(at offset: Int?, in reader: RecordReader) -> Int? {
        guard let offset else { return nil }
        guard offset != RecordReader.missingValue else { return 0 }
        do {
            switch try reader.byte(at: offset) {
            case RecordFormat.Tag.arrayBegin:
                var count = 0
                var position = offset + 1
                while try reader.byte(at: position) != RecordFormat.Tag.end {
                    position = try reader.skipValue(at: position, depth: 1)
                    count += 1
                }
                return count
            case RecordFormat.Tag.mapBegin:
                var count = 0
                var position = offset + 1
                while try reader.byte(at: position) != RecordFormat.Tag.end {
                    let key = try reader.keyRange(at: position)
                    position = try reader.skipValue(at: key.upperBound, depth: 1)
                    count += 1
                }
                return count
            case RecordFormat.Tag.string:
                let range = try reader.lengthPrefixed(at: offset + 1)
                let text = UnsafeRawBufferPointer(rebasing: reader.bytes[range])
                // The evaluator's count: characters, which only a `String` knows beyond ASCII.
                guard isASCII(text) else { return String(decoding: text, as: UTF8.self).count }
                var pairs = 0
                var index = 1
                while index < text.count {
                    if text[index] == 0x0A, text[index - 1] == 0x0D { pairs += 1 }
                    index += 1
                }
                return text.count - pairs
            case RecordFormat.Tag.data:
                return try reader.lengthPrefixed(at: offset + 1).count
            default:
                return 0
            }
        } catch {
            return nil
        }
    }

    @inline(__always)
    private static func scalar(at offset: Int, in reader: RecordReader) throws(RecordError) -> StoredValue {
        let tag = try reader.byte(at: offset)
        switch tag {
        case RecordFormat.Tag.null: return .null
        case RecordFormat.Tag.falseValue: return .bool(false)
        case RecordFormat.Tag.trueValue: return .bool(true)
        case RecordFormat.Tag.signed:
            return .number(.int(RecordFormat.unzigzag(try reader.varint(at: offset + 1).value)))
        case RecordFormat.Tag.unsigned: return .number(.uint(try reader.varint(at: offset + 1).value))
        case RecordFormat.Tag.float:
            return .number(.double(Double(Float(bitPattern: try reader.uint32(at: offset + 1)))))
        case RecordFormat.Tag.double: return .number(.double(Double(bitPattern: try reader.uint64(at: offset + 1))))
        case RecordFormat.Tag.date: return .date(Double(bitPattern: try reader.uint64(at: offset + 1)))
        case RecordFormat.Tag.string: return .text(try reader.lengthPrefixed(at: offset + 1), isURL: false)
        case RecordFormat.Tag.url: return .text(try reader.lengthPrefixed(at: offset + 1), isURL: true)
        case RecordFormat.Tag.decimal: return .decimal
        case RecordFormat.Tag.uuid: return .uuid
        default: return .other
        }
    }

    // MARK: - ASCII text

    /// Whether every byte is ASCII; eight bytes at a time.
    @inline(__always)
    static func isASCII(_ bytes: UnsafeRawBufferPointer) -> Bool {
        guard let base = bytes.baseAddress else { return true }
        let count = bytes.count
        if count <= 16 { return RecordReader.isShortASCII(bytes.assumingMemoryBound(to: UInt8.self)) }
        var bits: UInt64 = 0
        var index = 0
        while index &+ 8 <= count {
            bits |= base.loadUnaligned(fromByteOffset: index, as: UInt64.self)
            index &+= 8
        }
        while index < count {
            bits |= UInt64(base.load(fromByteOffset: index, as: UInt8.self))
            index &+= 1
        }
        return bits & 0x8080_8080_8080_8080 == 0
    }

    /// The ASCII lowercase of `byte`.
    @inline(__always)
    static func lowercase(_ byte: UInt8) -> UInt8 {
        byte &- 0x41 < 26 ? byte | 0x20 : byte
    }

    /// Whether the ASCII `text` passes `test` against the non-empty ASCII `pattern` (lowercased
    /// when `foldsCase`, which then compares the text's ASCII lowercase).
    static func search(
        _ test: QueryStringTest, in text: UnsafeRawBufferPointer, for pattern: UnsafeRawBufferPointer,
        foldsCase: Bool
    ) -> Bool {
        let count = pattern.count
        guard count <= text.count, let base = text.baseAddress, let needle = pattern.baseAddress else {
            return false
        }
        @inline(__always)
        func matches(at start: Int) -> Bool {
            if !foldsCase { return memcmp(base + start, needle, count) == 0 }
            for index in 0..<count
            where lowercase(base.load(fromByteOffset: start &+ index, as: UInt8.self))
                != needle.load(fromByteOffset: index, as: UInt8.self)
            {
                return false
            }
            return true
        }
        switch test {
        case .beginsWith: return matches(at: 0)
        case .endsWith: return matches(at: text.count - count)
        default:
            let first = needle.load(as: UInt8.self)
            let last = text.count - count
            var start = 0
            if !foldsCase {
                // The candidates for the first byte found by `memchr`, which reads a word at a time.
                while start <= last, let found = memchr(base + start, Int32(first), last &- start &+ 1) {
                    let offset = UnsafeRawPointer(found) - base
                    if matches(at: offset) { return true }
                    start = offset &+ 1
                }
                return false
            }
            while start <= last {
                let byte = base.load(fromByteOffset: start, as: UInt8.self)
                if lowercase(byte) == first, matches(at: start) { return true }
                start &+= 1
            }
            return false
        }
    }
}
