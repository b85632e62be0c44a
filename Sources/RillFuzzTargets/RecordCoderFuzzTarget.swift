import Foundation
import Rill

/// The record format: a value built from the input encodes and decodes to an equal value, both
/// schema-less (`RecordValue`) and through `Codable` (`RecordCoder`, a record of every kind of
/// field); and raw bytes decode or throw, never crash. Raw bytes that decode are canonical
/// (`RecordFormat`: equal values have equal bytes), so they encode back to themselves.
///
/// The input: a byte choosing the mode (built schema-less, built `Codable`, raw), then the
/// choices of the value or the raw bytes.
package enum RecordCoderFuzzTarget {
    package static func run(_ data: [UInt8]) throws {
        var input = FuzzInput(data)
        switch input.byte() % 3 {
        case 0:
            let value = RecordValueBuilder.value(&input, depth: 0)
            let bytes = value.recordBytes()
            let decoded = try bytes.withUnsafeBytes { try RecordValue(record: $0) }
            guard decoded == value else { throw FuzzFailure("\(value) decoded as \(decoded)") }
            if case .map(let fields) = value {
                let names = Set(fields.prefix(2).map(\.name))
                let some = try bytes.withUnsafeBytes { try RecordValue(record: $0, fields: names) }
                let expected = RecordValue.map(fields.filter { names.contains($0.name) })
                guard some == expected else { throw FuzzFailure("fields \(names) of \(value) decoded as \(some)") }
                let top = try bytes.withUnsafeBytes { try RecordCoder.topLevelFields($0) }
                guard top.map(\.name) == fields.map(\.name) else {
                    throw FuzzFailure("the top-level fields of \(value) are \(top.map(\.name))")
                }
            }
        case 1:
            let record = FuzzRecord(&input)
            let bytes = try RecordCoder.encode(record)
            let decoded = try RecordCoder.decode(FuzzRecord.self, from: bytes)
            guard decoded == record else { throw FuzzFailure("\(record) decoded as \(decoded)") }
        default:
            let bytes = Array(input.rest)
            if let value = try? bytes.withUnsafeBytes({ try RecordValue(record: $0) }) {
                let encoded = value.recordBytes()
                guard encoded == bytes else {
                    throw FuzzFailure("\(bytes) decoded as \(value), which encodes as \(encoded)")
                }
            }
            _ = try? bytes.withUnsafeBytes { try RecordCoder.topLevelFields($0) }
            if let record = try? RecordCoder.decode(FuzzRecord.self, from: bytes) {
                let encoded = try RecordCoder.encode(record)
                let again = try RecordCoder.decode(FuzzRecord.self, from: encoded)
                guard try RecordCoder.encode(again) == encoded else {
                    throw FuzzFailure("\(record) encoded, decoded and encoded again differs")
                }
            }
        }
    }
}
