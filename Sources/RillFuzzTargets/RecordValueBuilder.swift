import Foundation
import Rill

/// Schema-less values chosen by a fuzzing input: every kind of `RecordValue`, nested up to 6 levels.
enum RecordValueBuilder {
    static func value(_ input: inout FuzzInput, depth: Int) -> RecordValue {
        switch input.int(in: 0...(depth < 6 ? 14 : 12)) {
        case 0: return .null
        case 1: return .bool(input.bool())
        case 2: return .int(Int64(bitPattern: input.uint64()))
        case 3: return .uint(input.uint64())
        case 4: return .float(Float(bitPattern: UInt32(truncatingIfNeeded: input.uint64())))
        case 5: return .double(Double(bitPattern: input.uint64()))
        case 6: return .string(text(&input))
        case 7: return .data(Data(input.take(input.int(in: 0...40))))
        case 8: return .date(Date(timeIntervalSinceReferenceDate: Double(bitPattern: input.uint64())))
        case 9: return .uuid(uuid(&input))
        case 10: return .url(text(&input))
        case 11, 12: return .decimal(decimalText(&input))
        case 13:
            return .array((0..<input.int(in: 0...5)).map { _ in value(&input, depth: depth + 1) })
        default:
            var fields: [RecordField] = []
            for _ in 0..<input.int(in: 0...5) {
                let name = text(&input)
                let value = value(&input, depth: depth + 1)
                if !fields.contains(where: { $0.name == name }) { fields.append(RecordField(name: name, value: value)) }
            }
            return .map(fields)
        }
    }

    /// Text of up to 24 bytes of the input, invalid UTF-8 repaired.
    static func text(_ input: inout FuzzInput) -> String {
        String(decoding: input.take(input.int(in: 0...24)), as: UTF8.self)
    }

    static func uuid(_ input: inout FuzzInput) -> UUID {
        let b = input.take(16) + Array(repeating: 0, count: 16)
        return UUID(
            uuid: (b[0], b[1], b[2], b[3], b[4], b[5], b[6], b[7], b[8], b[9], b[10], b[11], b[12], b[13], b[14], b[15])
        )
    }

    /// A decimal number's text, as `Decimal.description` writes one: `-12.0045`.
    static func decimalText(_ input: inout FuzzInput) -> String {
        var text = input.bool() ? "-" : ""
        text += String(input.int(in: 0...65535))
        if input.bool() { text += "." + String(input.int(in: 0...65535)) }
        return text
    }
}
