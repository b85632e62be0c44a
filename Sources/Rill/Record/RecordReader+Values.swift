import Foundation

extension RecordReader {
    /// Why reading a value as a particular Swift type failed, before the failure is given a coding path.
    ///
    /// Readers know offsets but not coding keys; keeping keys out of them keeps them non-generic over the key type,
    /// so the compiler specialises them. The decoder turns a failure into `RecordError` or `DecodingError` with the
    /// path of the value (`RecordDecoder.error(_:key:)`).
    enum Failure: Error {
        /// The bytes are not a well-formed record.
        case malformed(RecordError)
        /// The value is well formed but its tag does not fit the requested type.
        case mismatch(expected: Any.Type, tag: UInt8, offset: Int)
        /// The value has the right tag but cannot be represented as the requested type.
        case corrupted(String)
    }

    /// The offset standing for a value that is not in the record at all; it reads as null.
    static let missingValue = -1

    /// Runs a structural read, classifying its errors as malformed input.
    @inline(__always)
    private func structural<R>(_ read: () throws(RecordError) -> R) throws(Failure) -> R {
        do throws(RecordError) {
            return try read()
        } catch {
            throw .malformed(error)
        }
    }

    /// The varint payload of the value whose tag is at `offset`.
    @inline(__always)
    private func varintPayload(of offset: Int) throws(Failure) -> UInt64 {
        try structural { () throws(RecordError) in try varint(at: offset + 1).value }
    }

    /// The 4-byte payload of the value whose tag is at `offset`.
    @inline(__always)
    private func bits32(of offset: Int) throws(Failure) -> UInt32 {
        try structural { () throws(RecordError) in try uint32(at: offset + 1) }
    }

    /// The 8-byte payload of the value whose tag is at `offset`.
    @inline(__always)
    private func bits64(of offset: Int) throws(Failure) -> UInt64 {
        try structural { () throws(RecordError) in try uint64(at: offset + 1) }
    }

    /// The tag of the value at `offset`; `missingValue` reads as null.
    @inline(__always)
    func tag(ofValueAt offset: Int) throws(Failure) -> UInt8 {
        if offset == Self.missingValue { return RecordFormat.Tag.null }
        return try structural { () throws(RecordError) in try byte(at: offset) }
    }

    /// Whether the value at `offset` is null.
    func readNull(at offset: Int) throws(Failure) -> Bool {
        try tag(ofValueAt: offset) == RecordFormat.Tag.null
    }

    func readBool(at offset: Int) throws(Failure) -> Bool {
        let tag = try tag(ofValueAt: offset)
        switch tag {
        case RecordFormat.Tag.trueValue: return true
        case RecordFormat.Tag.falseValue: return false
        default: throw .mismatch(expected: Bool.self, tag: tag, offset: offset)
        }
    }

    /// Reads either integer tag into `I`, so signed and unsigned types interchange whenever the value fits.
    func readInteger<I: FixedWidthInteger>(_ type: I.Type, at offset: Int) throws(Failure) -> I {
        let tag = try tag(ofValueAt: offset)
        switch tag {
        case RecordFormat.Tag.signed:
            let value = RecordFormat.unzigzag(try varintPayload(of: offset))
            guard let result = I(exactly: value) else { throw .corrupted("\(value) does not fit in \(I.self)") }
            return result
        case RecordFormat.Tag.unsigned:
            let value = try varintPayload(of: offset)
            guard let result = I(exactly: value) else { throw .corrupted("\(value) does not fit in \(I.self)") }
            return result
        default:
            throw .mismatch(expected: I.self, tag: tag, offset: offset)
        }
    }

    /// Reads a Double; floats widen exactly, integers are accepted when exactly representable.
    func readDouble(at offset: Int) throws(Failure) -> Double {
        let tag = try tag(ofValueAt: offset)
        switch tag {
        case RecordFormat.Tag.double:
            return Double(bitPattern: try bits64(of: offset))
        case RecordFormat.Tag.float:
            return Double(Float(bitPattern: try bits32(of: offset)))
        case RecordFormat.Tag.signed, RecordFormat.Tag.unsigned:
            return try exactFloatingPoint(Double.self, tag: tag, at: offset)
        default:
            throw .mismatch(expected: Double.self, tag: tag, offset: offset)
        }
    }

    /// Reads a Float; doubles narrow when within Float's range, as JSONDecoder does for numbers.
    func readFloat(at offset: Int) throws(Failure) -> Float {
        let tag = try tag(ofValueAt: offset)
        switch tag {
        case RecordFormat.Tag.float:
            return Float(bitPattern: try bits32(of: offset))
        case RecordFormat.Tag.double:
            let value = Double(bitPattern: try bits64(of: offset))
            guard !value.isFinite || value.magnitude <= Double(Float.greatestFiniteMagnitude) else {
                throw .corrupted("\(value) does not fit in Float")
            }
            return Float(value)
        case RecordFormat.Tag.signed, RecordFormat.Tag.unsigned:
            return try exactFloatingPoint(Float.self, tag: tag, at: offset)
        default:
            throw .mismatch(expected: Float.self, tag: tag, offset: offset)
        }
    }

    private func exactFloatingPoint<F: BinaryFloatingPoint>(
        _ type: F.Type, tag: UInt8, at offset: Int
    ) throws(Failure) -> F {
        let raw = try varintPayload(of: offset)
        if tag == RecordFormat.Tag.signed {
            let value = RecordFormat.unzigzag(raw)
            guard let result = F(exactly: value) else {
                throw .corrupted("\(value) is not exactly representable as \(F.self)")
            }
            return result
        }
        guard let result = F(exactly: raw) else { throw .corrupted("\(raw) is not exactly representable as \(F.self)") }
        return result
    }

    /// The UTF-8 text of a length-prefixed value whose tag is one of `tags`.
    private func readText<T>(_ type: T.Type, at offset: Int, tags: UInt8...) throws(Failure) -> String {
        let tag = try tag(ofValueAt: offset)
        guard tags.contains(tag) else { throw .mismatch(expected: T.self, tag: tag, offset: offset) }
        return try structural { () throws(RecordError) in try string(in: lengthPrefixed(at: offset + 1)) }
    }

    func readString(at offset: Int) throws(Failure) -> String {
        let tag = try tag(ofValueAt: offset)
        guard tag == RecordFormat.Tag.string else { throw .mismatch(expected: String.self, tag: tag, offset: offset) }
        return try structural { () throws(RecordError) in try string(in: lengthPrefixed(at: offset + 1)) }
    }

    func readData(at offset: Int) throws(Failure) -> Data {
        let tag = try tag(ofValueAt: offset)
        guard tag == RecordFormat.Tag.data else { throw .mismatch(expected: Data.self, tag: tag, offset: offset) }
        let range = try structural { () throws(RecordError) in try lengthPrefixed(at: offset + 1) }
        return Data(UnsafeRawBufferPointer(rebasing: bytes[range]))
    }

    func readDate(at offset: Int) throws(Failure) -> Date {
        let tag = try tag(ofValueAt: offset)
        guard tag == RecordFormat.Tag.date else { throw .mismatch(expected: Date.self, tag: tag, offset: offset) }
        let bits = try bits64(of: offset)
        return Date(timeIntervalSinceReferenceDate: Double(bitPattern: bits))
    }

    func readUUID(at offset: Int) throws(Failure) -> UUID {
        let tag = try tag(ofValueAt: offset)
        guard tag == RecordFormat.Tag.uuid else { throw .mismatch(expected: UUID.self, tag: tag, offset: offset) }
        return try structural { () throws(RecordError) in try uuid(at: offset + 1) }
    }

    /// Reads a URL; a plain string is accepted too, so a field can change from `String` to `URL`.
    func readURL(at offset: Int) throws(Failure) -> URL {
        let text = try readText(URL.self, at: offset, tags: RecordFormat.Tag.url, RecordFormat.Tag.string)
        guard let url = URL(string: text) else { throw .corrupted("invalid URL \"\(text)\"") }
        return url
    }

    func readDecimal(at offset: Int) throws(Failure) -> Decimal {
        let text = try readText(Decimal.self, at: offset, tags: RecordFormat.Tag.decimal)
        guard let decimal = RecordFormat.decimal(fromText: text) else {
            throw .corrupted("invalid decimal \"\(text)\"")
        }
        return decimal
    }
}
