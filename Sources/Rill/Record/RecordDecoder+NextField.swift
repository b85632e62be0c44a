import Foundation

// A model's fields of the types a record stores natively, read in stored order in one pass: the
// entry's key compared where it stands, then its value read and its end found by the same read.
// Anything else — another key, another tag, a value that does not read — gives nil with nothing
// changed, and the field is read by the general path (`decodeField`), which reports what does not
// read exactly as it does without this one.
extension RecordDecoder {
    /// The value of the map entry `name` read by `read` (its value and the offset just past it),
    /// when `name` is the map's next entry in stored order; nil otherwise.
    @inline(__always)
    func nextField<T>(named name: String, _ read: (RecordReader, Int) -> (value: T, end: Int)?) -> T? {
        guard !hasScannedMap, let key = nextKey(named: name), let (value, end) = read(reader, key.upperBound) else {
            return nil
        }
        nextEntry = end
        return value
    }

    /// Where the UTF-8 of the map's next entry's key sits, when that key is `name`; nil when it
    /// is another, or when the map has no next entry or it does not read. Nothing is changed.
    @inline(__always)
    func nextKey(named name: String) -> Range<Int>? {
        let reader = self.reader
        var position = nextEntry
        if position == 0 {
            guard offset >= 0, offset < reader.bytes.count, reader.bytes[offset] == RecordFormat.Tag.mapBegin
            else { return nil }
            position = offset &+ 1
        }
        guard let key = try? reader.keyRange(at: position) else { return nil }
        let equal =
            name.utf8.withContiguousStorageIfAvailable { reader.bytes(in: key, equal: $0) }
            ?? {
                var name = name
                return name.withUTF8 { reader.bytes(in: key, equal: $0) }
            }()
        return equal ? key : nil
    }

    /// `nextField(named:_:)` of an optional field: `.some(nil)` for a stored null.
    @inline(__always)
    func nextFieldIfPresent<T>(named name: String, _ read: (RecordReader, Int) -> (value: T, end: Int)?) -> T?? {
        nextField(named: name) { reader, offset -> (value: T?, end: Int)? in
            if offset < reader.bytes.count, reader.bytes[offset] == RecordFormat.Tag.null { return (nil, offset &+ 1) }
            return read(reader, offset).map { ($0.value, $0.end) }
        }
    }
}

extension RecordReader {
    /// The tag at `offset`, nil past the end.
    @inline(__always)
    private func tag(at offset: Int) -> UInt8? {
        offset >= 0 && offset < bytes.count ? bytes[offset] : nil
    }

    /// An integer stored under either integer tag that fits in `I`, and the offset past it.
    @inline(__always)
    func nextInteger<I: FixedWidthInteger>(_ type: I.Type, at offset: Int) -> (value: I, end: Int)? {
        let tag = tag(at: offset)
        guard tag == RecordFormat.Tag.signed || tag == RecordFormat.Tag.unsigned,
            let (raw, end) = try? varint(at: offset &+ 1)
        else { return nil }
        let value = tag == RecordFormat.Tag.signed ? I(exactly: RecordFormat.unzigzag(raw)) : I(exactly: raw)
        return value.map { ($0, end) }
    }

    /// The 8-byte payload of a value tagged `expected`, and the offset past it.
    @inline(__always)
    private func nextBits64(tagged expected: UInt8, at offset: Int) -> (value: UInt64, end: Int)? {
        guard tag(at: offset) == expected, let end = try? require(8, at: offset &+ 1) else { return nil }
        return (UInt64(littleEndian: bytes.loadUnaligned(fromByteOffset: offset &+ 1, as: UInt64.self)), end)
    }

    /// A double stored as one (not a float or an integer, which the general path widens).
    @inline(__always)
    func nextDouble(at offset: Int) -> (value: Double, end: Int)? {
        nextBits64(tagged: RecordFormat.Tag.double, at: offset).map { (Double(bitPattern: $0.value), $0.end) }
    }

    @inline(__always)
    func nextDate(at offset: Int) -> (value: Date, end: Int)? {
        nextBits64(tagged: RecordFormat.Tag.date, at: offset).map {
            (Date(timeIntervalSinceReferenceDate: Double(bitPattern: $0.value)), $0.end)
        }
    }

    @inline(__always)
    func nextUUID(at offset: Int) -> (value: UUID, end: Int)? {
        guard tag(at: offset) == RecordFormat.Tag.uuid, let end = try? require(16, at: offset &+ 1) else { return nil }
        return (UUID(uuid: bytes.loadUnaligned(fromByteOffset: offset &+ 1, as: uuid_t.self)), end)
    }

    @inline(__always)
    func nextString(at offset: Int) -> (value: String, end: Int)? {
        guard tag(at: offset) == RecordFormat.Tag.string, let range = try? lengthPrefixed(at: offset &+ 1),
            let text = try? string(in: range)
        else { return nil }
        return (text, range.upperBound)
    }

    @inline(__always)
    func nextBool(at offset: Int) -> (value: Bool, end: Int)? {
        switch tag(at: offset) {
        case RecordFormat.Tag.trueValue: (true, offset &+ 1)
        case RecordFormat.Tag.falseValue: (false, offset &+ 1)
        default: nil
        }
    }
}
