import Foundation

/// The record wire format: tag values, limits and small helpers shared by the encoder, the decoder and
/// `RecordValue`. Bytes are written by `RecordSink` and read by `RecordReader`.
///
/// A record is the version byte `0x01` followed by exactly one value. A value is a tag byte and a payload:
///
/// | tag  | value     | payload                                                              |
/// |------|-----------|----------------------------------------------------------------------|
/// | 0x00 | nil       | none                                                                 |
/// | 0x01 | false     | none                                                                 |
/// | 0x02 | true      | none                                                                 |
/// | 0x03 | signed    | zigzag LEB128 varint                                                 |
/// | 0x04 | unsigned  | LEB128 varint                                                        |
/// | 0x05 | Float     | 4-byte little-endian bit pattern                                     |
/// | 0x06 | Double    | 8-byte little-endian bit pattern                                     |
/// | 0x07 | String    | varint byte count, UTF-8                                             |
/// | 0x08 | Data      | varint byte count, bytes                                             |
/// | 0x09 | Date      | `timeIntervalSinceReferenceDate` as 8-byte little-endian Double      |
/// | 0x0A | UUID      | 16 raw bytes                                                         |
/// | 0x0B | URL       | varint byte count, UTF-8 of `absoluteString`                         |
/// | 0x0C | Decimal   | varint byte count, UTF-8 of `description`                            |
/// | 0x0D | map       | entries until 0x0F; an entry is a key then a value                   |
/// | 0x0E | array     | values until 0x0F                                                    |
/// | 0x0F | end       | closes the innermost map or array                                    |
///
/// A map key is written exactly like a String value (tag 0x07, count, UTF-8). The tag is what keeps keys apart from
/// the end byte: a bare length prefix would make every 15-byte key start with 0x0F.
///
/// Varints are canonical: no more than ten bytes, no bits beyond 64, no redundant trailing zero groups. With the
/// encoder always producing the shortest form, equal values have equal bytes, which `RecordCoder.topLevelFields`
/// relies on to spot changed fields by comparing byte ranges.
enum RecordFormat {
    /// The format version written as the first byte of every record.
    static let version: UInt8 = 0x01

    /// Deepest container nesting accepted when reading, so hostile input cannot exhaust the stack.
    static let maxDepth = 512

    /// How deep a reader goes into containers by recursion; below, it reads them with a loop and a
    /// stack of its own, so that the deepest record accepted reads on a small thread stack (a
    /// connection's of the daemon, 1 MiB) in any build (see `RecordDepthTests`).
    static let recursionDepth = 16

    /// Tag byte values.
    enum Tag {
        static let null: UInt8 = 0x00
        static let falseValue: UInt8 = 0x01
        static let trueValue: UInt8 = 0x02
        static let signed: UInt8 = 0x03
        static let unsigned: UInt8 = 0x04
        static let float: UInt8 = 0x05
        static let double: UInt8 = 0x06
        static let string: UInt8 = 0x07
        static let data: UInt8 = 0x08
        static let date: UInt8 = 0x09
        static let uuid: UInt8 = 0x0A
        static let url: UInt8 = 0x0B
        static let decimal: UInt8 = 0x0C
        static let mapBegin: UInt8 = 0x0D
        static let arrayBegin: UInt8 = 0x0E
        static let end: UInt8 = 0x0F

        /// A word for the kind of value a tag starts, for error messages.
        static func name(_ tag: UInt8) -> String {
            switch tag {
            case null: "null"
            case falseValue, trueValue: "a bool"
            case signed: "a signed integer"
            case unsigned: "an unsigned integer"
            case float: "a float"
            case double: "a double"
            case string: "a string"
            case data: "data"
            case date: "a date"
            case uuid: "a UUID"
            case url: "a URL"
            case decimal: "a decimal"
            case mapBegin: "a map"
            case arrayBegin: "an array"
            case end: "an end byte"
            default: "unknown tag 0x" + String(tag, radix: 16, uppercase: true)
            }
        }
    }

    /// Types written under their own tag instead of through their `Codable` implementation.
    ///
    /// Identified by comparing metatypes, which is cheap and, unlike a cast to `T?`, instantiates no generic
    /// metadata at run time.
    enum NativeType {
        case string, int, bool, double, date, uuid, data, url, decimal
        case int64, uint64, uint, int32, uint32, float, int16, uint16, int8, uint8, int128, uint128

        /// The native type `type` is, or nil; frequent types are tested first.
        ///
        /// Each candidate is first compared by size, which is read once and rules out most candidates (and most
        /// non-native types, such as models and collections) without fetching the candidate's metatype.
        init?<T>(_ type: T.Type) {
            let size = MemoryLayout<T>.size
            @inline(__always)
            func isType<U>(_ candidate: U.Type) -> Bool {
                size == MemoryLayout<U>.size && type == candidate
            }
            if isType(String.self) {
                self = .string
            } else if isType(Int.self) {
                self = .int
            } else if isType(Bool.self) {
                self = .bool
            } else if isType(Double.self) {
                self = .double
            } else if isType(Date.self) {
                self = .date
            } else if isType(UUID.self) {
                self = .uuid
            } else if isType(Data.self) {
                self = .data
            } else if isType(URL.self) {
                self = .url
            } else if isType(Decimal.self) {
                self = .decimal
            } else if isType(Int64.self) {
                self = .int64
            } else if isType(UInt64.self) {
                self = .uint64
            } else if isType(UInt.self) {
                self = .uint
            } else if isType(Int32.self) {
                self = .int32
            } else if isType(UInt32.self) {
                self = .uint32
            } else if isType(Float.self) {
                self = .float
            } else if isType(Int16.self) {
                self = .int16
            } else if isType(UInt16.self) {
                self = .uint16
            } else if isType(Int8.self) {
                self = .int8
            } else if isType(UInt8.self) {
                self = .uint8
            } else if #available(macOS 15.0, iOS 18.0, watchOS 11.0, tvOS 18.0, visionOS 2.0, *), isType(Int128.self) {
                self = .int128
            } else if #available(macOS 15.0, iOS 18.0, watchOS 11.0, tvOS 18.0, visionOS 2.0, *), isType(UInt128.self) {
                self = .uint128
            } else {
                return nil
            }
        }
    }

    /// Returns `value` as `U`, which the caller has established is `T` itself (see `NativeType`).
    ///
    /// A plain bit reinterpretation: `as!` would run the general dynamic cast machinery for every field.
    @inline(__always)
    static func identityCast<T, U>(_ value: T, to type: U.Type) -> U {
        precondition(T.self == U.self, "identityCast between different types")
        return unsafeBitCast(value, to: U.self)
    }

    // MARK: - Integers

    /// Maps signed integers to unsigned ones so that small magnitudes of either sign get short varints.
    static func zigzag(_ value: Int64) -> UInt64 {
        UInt64(bitPattern: (value &<< 1) ^ (value >> 63))
    }

    /// Inverse of `zigzag(_:)`.
    static func unzigzag(_ value: UInt64) -> Int64 {
        Int64(bitPattern: value >> 1) ^ -Int64(bitPattern: value & 1)
    }

    /// Parses the text stored for a Decimal; `Decimal(string:)` alone does not read back `NaN`.
    static func decimal(fromText text: String) -> Decimal? {
        if text == "NaN" { return Decimal.nan }
        return Decimal(string: text, locale: nil)
    }
}
