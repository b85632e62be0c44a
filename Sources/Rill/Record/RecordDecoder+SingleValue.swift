import Foundation

/// A decoder is its own single-value container: each value is read at the decoder's offset.
extension RecordDecoder: SingleValueDecodingContainer {
    func decodeNil() -> Bool {
        (try? reader.readNull(at: offset)) ?? false
    }

    func decode(_ type: Bool.Type) throws -> Bool {
        try read(RecordCodingKey.absent) { reader, offset in
            try reader.readBool(at: offset)
        }
    }

    func decode(_ type: String.Type) throws -> String {
        try read(RecordCodingKey.absent) { reader, offset in
            try reader.readString(at: offset)
        }
    }

    func decode(_ type: Double.Type) throws -> Double {
        try read(RecordCodingKey.absent) { reader, offset in
            try reader.readDouble(at: offset)
        }
    }

    func decode(_ type: Float.Type) throws -> Float {
        try read(RecordCodingKey.absent) { reader, offset in
            try reader.readFloat(at: offset)
        }
    }

    func decode(_ type: Int.Type) throws -> Int {
        try readInteger(Int.self)
    }

    func decode(_ type: Int8.Type) throws -> Int8 {
        try readInteger(Int8.self)
    }

    func decode(_ type: Int16.Type) throws -> Int16 {
        try readInteger(Int16.self)
    }

    func decode(_ type: Int32.Type) throws -> Int32 {
        try readInteger(Int32.self)
    }

    func decode(_ type: Int64.Type) throws -> Int64 {
        try readInteger(Int64.self)
    }

    @available(macOS 15.0, iOS 18.0, watchOS 11.0, tvOS 18.0, visionOS 2.0, *)
    func decode(_ type: Int128.Type) throws -> Int128 {
        try readInteger(Int128.self)
    }

    func decode(_ type: UInt.Type) throws -> UInt {
        try readInteger(UInt.self)
    }

    func decode(_ type: UInt8.Type) throws -> UInt8 {
        try readInteger(UInt8.self)
    }

    func decode(_ type: UInt16.Type) throws -> UInt16 {
        try readInteger(UInt16.self)
    }

    func decode(_ type: UInt32.Type) throws -> UInt32 {
        try readInteger(UInt32.self)
    }

    func decode(_ type: UInt64.Type) throws -> UInt64 {
        try readInteger(UInt64.self)
    }

    @available(macOS 15.0, iOS 18.0, watchOS 11.0, tvOS 18.0, visionOS 2.0, *)
    func decode(_ type: UInt128.Type) throws -> UInt128 {
        try readInteger(UInt128.self)
    }

    func decode<T: Decodable>(_ type: T.Type) throws -> T {
        try decodeValue(T.self, at: offset, key: RecordCodingKey.absent)
    }

    private func readInteger<I: FixedWidthInteger>(_ type: I.Type) throws -> I {
        try read(RecordCodingKey.absent) { reader, offset in
            try reader.readInteger(I.self, at: offset)
        }
    }
}
