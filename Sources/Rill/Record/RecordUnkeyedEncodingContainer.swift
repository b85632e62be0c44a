import Foundation

/// Writes array elements straight into the encoder's sink.
///
/// The element count lives on the encoder rather than in this struct, so every container handed out for the same
/// array agrees on it.
struct RecordUnkeyedEncodingContainer: UnkeyedEncodingContainer {
    private let encoder: RecordEncoder
    private let sink: RecordSink

    init(encoder: RecordEncoder) {
        self.encoder = encoder
        self.sink = encoder.sink
    }

    var codingPath: [any CodingKey] {
        encoder.codingPath
    }

    var count: Int {
        encoder.elementCount
    }

    private var nextKey: RecordCodingKey {
        RecordCodingKey(intValue: encoder.elementCount)
    }

    /// Runs one element write and counts it.
    private func append(_ write: (RecordSink) -> Void) throws {
        try encoder.checkWritable()
        write(sink)
        encoder.elementCount += 1
    }

    mutating func encodeNil() throws {
        try append { $0.write(RecordFormat.Tag.null) }
    }

    mutating func encode(_ value: Bool) throws {
        try append { $0.writeBool(value) }
    }

    mutating func encode(_ value: String) throws {
        try append { $0.writeString(value) }
    }

    mutating func encode(_ value: Double) throws {
        try append { $0.writeDouble(value) }
    }

    mutating func encode(_ value: Float) throws {
        try append { $0.writeFloat(value) }
    }

    mutating func encode(_ value: Int) throws {
        try append { $0.writeSigned(Int64(value)) }
    }

    mutating func encode(_ value: Int8) throws {
        try append { $0.writeSigned(Int64(value)) }
    }

    mutating func encode(_ value: Int16) throws {
        try append { $0.writeSigned(Int64(value)) }
    }

    mutating func encode(_ value: Int32) throws {
        try append { $0.writeSigned(Int64(value)) }
    }

    mutating func encode(_ value: Int64) throws {
        try append { $0.writeSigned(value) }
    }

    @available(macOS 15.0, iOS 18.0, watchOS 11.0, tvOS 18.0, visionOS 2.0, *)
    mutating func encode(_ value: Int128) throws {
        try encoder.checkWritable()
        try encoder.encodeWide(value, key: nextKey)
        encoder.elementCount += 1
    }

    mutating func encode(_ value: UInt) throws {
        try append { $0.writeUnsigned(UInt64(value)) }
    }

    mutating func encode(_ value: UInt8) throws {
        try append { $0.writeUnsigned(UInt64(value)) }
    }

    mutating func encode(_ value: UInt16) throws {
        try append { $0.writeUnsigned(UInt64(value)) }
    }

    mutating func encode(_ value: UInt32) throws {
        try append { $0.writeUnsigned(UInt64(value)) }
    }

    mutating func encode(_ value: UInt64) throws {
        try append { $0.writeUnsigned(value) }
    }

    @available(macOS 15.0, iOS 18.0, watchOS 11.0, tvOS 18.0, visionOS 2.0, *)
    mutating func encode(_ value: UInt128) throws {
        try encoder.checkWritable()
        try encoder.encodeWide(value, key: nextKey)
        encoder.elementCount += 1
    }

    mutating func encode<T: Encodable>(_ value: T) throws {
        try encoder.checkWritable()
        try encoder.encodeValue(value, key: nextKey)
        encoder.elementCount += 1
    }

    mutating func nestedContainer<NestedKey: CodingKey>(
        keyedBy keyType: NestedKey.Type
    ) -> KeyedEncodingContainer<NestedKey> {
        deferredElement().container(keyedBy: NestedKey.self)
    }

    mutating func nestedUnkeyedContainer() -> any UnkeyedEncodingContainer {
        deferredElement().unkeyedContainer()
    }

    mutating func superEncoder() -> any Encoder {
        deferredElement()
    }

    /// Reserves the next element's spot for a value that may be written later.
    private func deferredElement() -> RecordEncoder {
        let deferred = encoder.deferredEncoder(key: nextKey)
        encoder.elementCount += 1
        return deferred
    }
}
