import Foundation

enum LiveDecoding {
    static func decode<T: PersistentModel>(_ type: T.Type, _ record: [UInt8], key: [UInt8]) throws -> T {
        do {
            return try T.decodeStored(from: record)
        } catch {
            let id = key.withUnsafeBytes { AnyIdentifier(storageKey: $0) }.map { "\($0)" } ?? "?"
            throw RillError(
                .decodingFailed,
                "the stored \(T.entityName) \(id) does not decode as \(T.self): \(ModelContext.describe(error))",
                underlyingError: error)
        }
    }
}
