import Foundation

/// Reads array elements in order.
///
/// The decoder walked the array once to count it, so `count` is exact and `isAtEnd` never has to look at bytes.
/// The cursor only moves after an element decodes successfully, so a failed `decode` can be retried as another type.
struct RecordUnkeyedDecodingContainer: UnkeyedDecodingContainer {
    private let decoder: RecordDecoder
    private var position: Int
    private let elementCount: Int
    private(set) var currentIndex = 0

    init(decoder: RecordDecoder, start: Int, count: Int) {
        self.decoder = decoder
        self.position = start
        self.elementCount = count
    }

    var codingPath: [any CodingKey] {
        decoder.codingPath
    }

    var count: Int? {
        elementCount
    }

    var isAtEnd: Bool {
        currentIndex >= elementCount
    }

    private var currentKey: RecordCodingKey {
        RecordCodingKey(intValue: currentIndex)
    }

    /// Reads the current element with `read`, then moves past it.
    private mutating func next<T>(
        _ type: T.Type, _ read: (RecordDecoder, _ offset: Int, _ key: RecordCodingKey) throws -> T
    ) throws -> T {
        guard !isAtEnd else {
            throw DecodingError.valueNotFound(
                T.self,
                DecodingError.Context(
                    codingPath: decoder.path(adding: currentKey), debugDescription: "Unkeyed container is at end."))
        }
        let key = currentKey
        let start = position
        let end = try decoder.annotating(key) { () throws(RecordError) in
            try decoder.reader.skipValue(at: start, depth: decoder.depth + 1)
        }
        let value = try read(decoder, start, key)
        position = end
        currentIndex += 1
        return value
    }

    /// Reads the current element with a typed reader, then moves past it.
    @inline(__always)
    private mutating func nextValue<R>(_ body: (RecordReader, Int) throws -> R) throws -> R {
        try next(R.self) { decoder, offset, key in try decoder.read(key, at: offset, body) }
    }

    /// Consumes the current element only when it is null; anything else stays for the decode call that follows.
    mutating func decodeNil() throws -> Bool {
        guard !isAtEnd else {
            throw DecodingError.valueNotFound(
                Any?.self,
                DecodingError.Context(
                    codingPath: decoder.path(adding: currentKey), debugDescription: "Unkeyed container is at end."))
        }
        let isNull = try decoder.read(currentKey, at: position) { reader, offset in
            try reader.readNull(at: offset)
        }
        guard isNull else { return false }
        position += 1
        currentIndex += 1
        return true
    }

    mutating func decode(_ type: Bool.Type) throws -> Bool {
        try nextValue { try $0.readBool(at: $1) }
    }

    mutating func decode(_ type: String.Type) throws -> String {
        try nextValue { try $0.readString(at: $1) }
    }

    mutating func decode(_ type: Double.Type) throws -> Double {
        try nextValue { try $0.readDouble(at: $1) }
    }

    mutating func decode(_ type: Float.Type) throws -> Float {
        try nextValue { try $0.readFloat(at: $1) }
    }

    mutating func decode(_ type: Int.Type) throws -> Int {
        try nextValue { try $0.readInteger(Int.self, at: $1) }
    }

    mutating func decode(_ type: Int8.Type) throws -> Int8 {
        try nextValue { try $0.readInteger(Int8.self, at: $1) }
    }

    mutating func decode(_ type: Int16.Type) throws -> Int16 {
        try nextValue { try $0.readInteger(Int16.self, at: $1) }
    }

    mutating func decode(_ type: Int32.Type) throws -> Int32 {
        try nextValue { try $0.readInteger(Int32.self, at: $1) }
    }

    mutating func decode(_ type: Int64.Type) throws -> Int64 {
        try nextValue { try $0.readInteger(Int64.self, at: $1) }
    }

    @available(macOS 15.0, iOS 18.0, watchOS 11.0, tvOS 18.0, visionOS 2.0, *)
    mutating func decode(_ type: Int128.Type) throws -> Int128 {
        try nextValue { try $0.readInteger(Int128.self, at: $1) }
    }

    mutating func decode(_ type: UInt.Type) throws -> UInt {
        try nextValue { try $0.readInteger(UInt.self, at: $1) }
    }

    mutating func decode(_ type: UInt8.Type) throws -> UInt8 {
        try nextValue { try $0.readInteger(UInt8.self, at: $1) }
    }

    mutating func decode(_ type: UInt16.Type) throws -> UInt16 {
        try nextValue { try $0.readInteger(UInt16.self, at: $1) }
    }

    mutating func decode(_ type: UInt32.Type) throws -> UInt32 {
        try nextValue { try $0.readInteger(UInt32.self, at: $1) }
    }

    mutating func decode(_ type: UInt64.Type) throws -> UInt64 {
        try nextValue { try $0.readInteger(UInt64.self, at: $1) }
    }

    @available(macOS 15.0, iOS 18.0, watchOS 11.0, tvOS 18.0, visionOS 2.0, *)
    mutating func decode(_ type: UInt128.Type) throws -> UInt128 {
        try nextValue { try $0.readInteger(UInt128.self, at: $1) }
    }

    mutating func decode<T: Decodable>(_ type: T.Type) throws -> T {
        try next(T.self) { try $0.decodeValue(T.self, at: $1, key: $2) }
    }

    mutating func nestedContainer<NestedKey: CodingKey>(
        keyedBy type: NestedKey.Type
    ) throws -> KeyedDecodingContainer<NestedKey> {
        try next(KeyedDecodingContainer<NestedKey>.self) {
            try $0.child(at: $1, key: $2).container(keyedBy: NestedKey.self)
        }
    }

    mutating func nestedUnkeyedContainer() throws -> any UnkeyedDecodingContainer {
        try next((any UnkeyedDecodingContainer).self) { try $0.child(at: $1, key: $2).unkeyedContainer() }
    }

    mutating func superDecoder() throws -> any Decoder {
        try next((any Decoder).self) { try $0.child(at: $1, key: $2) }
    }
}
