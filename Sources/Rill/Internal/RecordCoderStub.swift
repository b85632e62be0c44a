import Foundation
// TEMPORARY: replaced by the binary record codec.
package enum RecordCoder {
    package static func encode<T: Encodable>(_ value: T) throws -> [UInt8] { Array(try JSONEncoder().encode(value)) }
    package static func decode<T: Decodable>(_ type: T.Type, from bytes: UnsafeRawBufferPointer) throws -> T {
        try JSONDecoder().decode(T.self, from: Data(bytes))
    }
    package static func decode<T: Decodable>(_ type: T.Type, from bytes: [UInt8]) throws -> T {
        try JSONDecoder().decode(T.self, from: Data(bytes))
    }
    package static func topLevelFields(_ bytes: UnsafeRawBufferPointer) throws -> [(name: String, value: Range<Int>)] { [] }
}
