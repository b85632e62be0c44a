import Foundation

/// Writes map entries — a key, then a value — straight into the encoder's sink.
///
/// The map's begin tag was written when the encoder opened the container; its end tag is written by the encoder
/// once the value has finished encoding.
struct RecordKeyedEncodingContainer<Key: CodingKey>: KeyedEncodingContainerProtocol {
    private let encoder: RecordEncoder
    private let sink: RecordSink

    init(encoder: RecordEncoder) {
        self.encoder = encoder
        self.sink = encoder.sink
    }

    var codingPath: [any CodingKey] {
        encoder.codingPath
    }

    private func writeKey(_ key: Key) throws(RecordError) {
        try encoder.checkWritable()
        sink.writeKey(key.stringValue)
    }

    mutating func encodeNil(forKey key: Key) throws {
        try writeKey(key)
        sink.write(RecordFormat.Tag.null)
    }

    mutating func encode(_ value: Bool, forKey key: Key) throws {
        try writeKey(key)
        sink.writeBool(value)
    }

    mutating func encode(_ value: String, forKey key: Key) throws {
        try writeKey(key)
        sink.writeString(value)
    }

    mutating func encode(_ value: Double, forKey key: Key) throws {
        try writeKey(key)
        sink.writeDouble(value)
    }

    mutating func encode(_ value: Float, forKey key: Key) throws {
        try writeKey(key)
        sink.writeFloat(value)
    }

    mutating func encode(_ value: Int, forKey key: Key) throws {
        try writeKey(key)
        sink.writeSigned(Int64(value))
    }

    mutating func encode(_ value: Int8, forKey key: Key) throws {
        try writeKey(key)
        sink.writeSigned(Int64(value))
    }

    mutating func encode(_ value: Int16, forKey key: Key) throws {
        try writeKey(key)
        sink.writeSigned(Int64(value))
    }

    mutating func encode(_ value: Int32, forKey key: Key) throws {
        try writeKey(key)
        sink.writeSigned(Int64(value))
    }

    mutating func encode(_ value: Int64, forKey key: Key) throws {
        try writeKey(key)
        sink.writeSigned(value)
    }

    @available(macOS 15.0, iOS 18.0, watchOS 11.0, tvOS 18.0, visionOS 2.0, *)
    mutating func encode(_ value: Int128, forKey key: Key) throws {
        try writeKey(key)
        try encoder.encodeWide(value, key: key)
    }

    mutating func encode(_ value: UInt, forKey key: Key) throws {
        try writeKey(key)
        sink.writeUnsigned(UInt64(value))
    }

    mutating func encode(_ value: UInt8, forKey key: Key) throws {
        try writeKey(key)
        sink.writeUnsigned(UInt64(value))
    }

    mutating func encode(_ value: UInt16, forKey key: Key) throws {
        try writeKey(key)
        sink.writeUnsigned(UInt64(value))
    }

    mutating func encode(_ value: UInt32, forKey key: Key) throws {
        try writeKey(key)
        sink.writeUnsigned(UInt64(value))
    }

    mutating func encode(_ value: UInt64, forKey key: Key) throws {
        try writeKey(key)
        sink.writeUnsigned(value)
    }

    @available(macOS 15.0, iOS 18.0, watchOS 11.0, tvOS 18.0, visionOS 2.0, *)
    mutating func encode(_ value: UInt128, forKey key: Key) throws {
        try writeKey(key)
        try encoder.encodeWide(value, key: key)
    }

    mutating func encode<T: Encodable>(_ value: T, forKey key: Key) throws {
        // The inverse side of a relationship is read from the references, never stored.
        if T.self is any UnstoredValue.Type { return }
        try writeKey(key)
        try encoder.encodeValue(value, key: key)
    }

    mutating func nestedContainer<NestedKey: CodingKey>(
        keyedBy keyType: NestedKey.Type, forKey key: Key
    ) -> KeyedEncodingContainer<NestedKey> {
        deferredEncoder(forKey: key).container(keyedBy: NestedKey.self)
    }

    mutating func nestedUnkeyedContainer(forKey key: Key) -> any UnkeyedEncodingContainer {
        deferredEncoder(forKey: key).unkeyedContainer()
    }

    mutating func superEncoder() -> any Encoder {
        sink.writeKey(RecordCodingKey.superKey.stringValue)
        return encoder.deferredEncoder(key: RecordCodingKey.superKey)
    }

    mutating func superEncoder(forKey key: Key) -> any Encoder {
        deferredEncoder(forKey: key)
    }

    /// Writes the key now and reserves the spot after it for a value that may be written later.
    private func deferredEncoder(forKey key: Key) -> RecordEncoder {
        sink.writeKey(key.stringValue)
        return encoder.deferredEncoder(key: key)
    }
}
