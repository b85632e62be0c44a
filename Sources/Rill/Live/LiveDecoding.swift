import Foundation

enum LiveDecoding {
    static func decode<T: PersistentModel>(_ type: T.Type, _ record: [UInt8], key: [UInt8]) throws -> T {
        try record.withUnsafeBytes { bytes in
            try key.withUnsafeBytes { try T.decodeStored(from: bytes, key: $0) }
        }
    }
}
