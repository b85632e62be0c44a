import Foundation

/// Converts `Codable` values to and from the compact, self-describing record format (see `RecordFormat`).
///
/// Records carry their own type tags and field names, so any record can be inspected without the Swift type that
/// wrote it (`RecordValue`), and the fields that changed between two versions of a record can be found by comparing
/// bytes (`topLevelFields(_:)`).
package enum RecordCoder {
    /// Encodes a value as a record: one format-version byte (1) then the tagged value.
    ///
    /// Errors name the path of the value that failed, e.g. "cannot encode `address.zip`: …".
    package static func encode<T: Encodable>(_ value: T) throws -> [UInt8] {
        var bytes: [UInt8] = []
        try encode(value, into: &bytes)
        return bytes
    }

    /// Appends the encoding to an existing buffer (same bytes as encode) — used on hot paths to avoid copies.
    ///
    /// The record is built in a scratch buffer and copied into `buffer` once; nothing is appended if encoding
    /// throws.
    package static func encode<T: Encodable>(_ value: T, into buffer: inout [UInt8]) throws {
        let sink = RecordSink(capacity: 256)
        defer { sink.releaseSplices() }
        sink.write(RecordFormat.version)
        try RecordEncoder(sink: sink, parent: nil, key: nil).encodeTopLevel(value)
        if !sink.hasSplices { buffer.reserveCapacity(buffer.count + sink.count) }
        sink.assemble(into: &buffer)
    }

    /// Decodes a value of type `T` from record bytes.
    ///
    /// Malformed bytes throw `RecordError`; well-formed bytes that do not fit `T` throw `DecodingError`.
    package static func decode<T: Decodable>(_ type: T.Type, from bytes: UnsafeRawBufferPointer) throws -> T {
        var spare: RecordDecoder?
        return try decode(T.self, from: bytes, reusing: &spare)
    }

    /// Decodes a value of type `T` from record bytes, like `decode(_:from:)`, with the root decoder
    /// left in `spare` by the previous call when there is one: a fetch decodes each of its rows
    /// this way, and allocates one decoder, not one a row.
    ///
    /// The decoder is taken out of `spare` while it decodes (a decode nested in `T.init(from:)`
    /// makes its own) and put back only when nothing else holds it: a type that kept its
    /// decoder, or a container of it, keeps what it was given.
    static func decode<T: Decodable>(
        _ type: T.Type, from bytes: UnsafeRawBufferPointer, reusing spare: inout RecordDecoder?
    ) throws -> T {
        try withRoot(of: bytes, reusing: &spare) { try $0.decodeTopLevel(T.self) }
    }

    /// Reads the model `T` from its record bytes through its `init(record:)` (by default, its
    /// `Decodable` conformance), with the root decoder left in `spare` as `decode(_:from:reusing:)`
    /// does.
    static func decodeModel<T: PersistentModel>(
        _ type: T.Type, from bytes: UnsafeRawBufferPointer, reusing spare: inout RecordDecoder?
    ) throws -> T {
        try withRoot(of: bytes, reusing: &spare) { try $0.decodeModelTopLevel(T.self) }
    }

    /// Reads the model `T` from its record bytes through its `init(record:)`.
    static func decodeModel<T: PersistentModel>(_ type: T.Type, from bytes: UnsafeRawBufferPointer) throws -> T {
        var spare: RecordDecoder?
        return try decodeModel(T.self, from: bytes, reusing: &spare)
    }

    /// Reads the model `T` from its record bytes, held in an array, through its `init(record:)`.
    static func decodeModel<T: PersistentModel>(_ type: T.Type, from bytes: [UInt8]) throws -> T {
        try bytes.withUnsafeBytes { try decodeModel(T.self, from: $0) }
    }

    /// Runs `body` with a root decoder over `bytes`: the one in `spare` when there is one, put
    /// back afterwards when nothing else holds it. When something does (the value kept the
    /// decoder or a container), `body` runs again with a root that owns a copy of `bytes`.
    @inline(__always)
    private static func withRoot<T>(
        of bytes: UnsafeRawBufferPointer, reusing spare: inout RecordDecoder?, _ body: (RecordDecoder) throws -> T
    ) throws -> T {
        let reader = RecordReader(bytes)
        let start = try reader.checkVersion()
        var root: RecordDecoder
        if let kept = spare {
            spare = nil
            kept.reset(to: reader, offset: start)
            // From the second record on: a fetch of one row would make the kept container for nothing.
            kept.keepsContainer = RecordDecoder.keyedContainerIsItsBox
            root = kept
        } else {
            root = RecordDecoder(reader: reader, offset: start, parent: nil, key: nil, depth: 0)
        }
        let value: T
        do {
            value = try body(root)
        } catch {
            root.settleKeptContainer()
            throw error
        }
        root.settleKeptContainer()
        if isKnownUniquelyReferenced(&root) {
            spare = root
            return value
        }
        // The value keeps the decoder, or a container of it, which reads `bytes` in place: the
        // caller's, valid only until it returns (a fetch's are pages of its read transaction). So
        // the value is decoded again by a root that reads a copy of the bytes and owns it.
        return try withOwningRoot(copying: bytes, body)
    }

    /// `body`'s value, decoded by a root decoder that reads a copy of `bytes` it owns: what keeps
    /// the decoder, or a container, keeps the copy.
    private static func withOwningRoot<T>(
        copying bytes: UnsafeRawBufferPointer, _ body: (RecordDecoder) throws -> T
    ) throws -> T {
        let copy = RecordBytesCopy(bytes)
        let reader = RecordReader(copy.bytes)
        let root = RecordDecoder(reader: reader, offset: try reader.checkVersion(), parent: nil, key: nil, depth: 0)
        root.ownedBytes = copy
        return try body(root)
    }

    /// Decodes a value of type `T` from record bytes held in an array.
    package static func decode<T: Decodable>(_ type: T.Type, from bytes: [UInt8]) throws -> T {
        try bytes.withUnsafeBytes { try decode(T.self, from: $0) }
    }

    /// Top-level fields of an encoded record (must be a map): name and the byte range of the field's encoded value
    /// inside `bytes`, in stored order. Used to find which fields changed between two versions of a record by
    /// comparing byte ranges, without decoding. Throws on malformed bytes.
    ///
    /// The whole record is checked structurally (tags, lengths, nesting, no trailing bytes); the UTF-8 of field
    /// names is validated, that of string values inside the fields is not.
    package static func topLevelFields(
        _ bytes: UnsafeRawBufferPointer
    ) throws -> [(name: String, value: Range<Int>)] {
        let reader = RecordReader(bytes)
        let start = try reader.checkVersion()
        let tag = try reader.byte(at: start)
        guard tag == RecordFormat.Tag.mapBegin else {
            throw RecordError(
                .invalidStructure, "the record holds \(RecordFormat.Tag.name(tag)), not a map", offset: start)
        }
        var fields: [(name: String, value: Range<Int>)] = []
        var position = start + 1
        while try reader.byte(at: position) != RecordFormat.Tag.end {
            let key = try reader.keyRange(at: position)
            let name = try reader.string(in: key)
            position = try reader.skipValue(at: key.upperBound, depth: 1)
            fields.append((name, key.upperBound..<position))
        }
        try reader.checkEnd(position + 1)
        return fields
    }
}
