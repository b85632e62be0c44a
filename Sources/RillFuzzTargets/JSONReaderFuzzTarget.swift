import Foundation
import Rill

/// Rill's JSON reader: any bytes read as a value or throw `JSONReader.Error`, never crash; a
/// value read writes (`jsonString()`) as JSON that reads back as an equal value; and Foundation's
/// `JSONSerialization` reads the same bytes as the same value. Foundation may accept what Rill
/// refuses on purpose (a repeated key, nesting deeper than 64 levels, other encodings than
/// UTF-8), so only Rill's values are compared with Foundation's, not its refusals.
package enum JSONReaderFuzzTarget {
    package static func run(_ data: [UInt8]) throws {
        let value: RecordValue
        do {
            value = try JSONReader.parse(data)
        } catch {
            return
        }
        let written = value.jsonString()
        let again: RecordValue
        do {
            again = try JSONReader.parse(Array(written.utf8))
        } catch {
            throw FuzzFailure("\(value) wrote as \(written), which does not read: \(error)")
        }
        guard again == value else { throw FuzzFailure("\(value) wrote as \(written), which reads as \(again)") }
        // Numbers beyond a Double's range are kept as text by Rill and refused by Foundation.
        guard !hasHugeNumber(value) else { return }
        let object: Any
        do {
            object = try JSONSerialization.jsonObject(with: Data(data), options: [.fragmentsAllowed])
        } catch {
            throw FuzzFailure("Rill read \(value) where Foundation fails: \(error)")
        }
        guard agrees(value, object) else { throw FuzzFailure("Rill read \(value) where Foundation read \(object)") }
    }

    private static func hasHugeNumber(_ value: RecordValue) -> Bool {
        switch value {
        case .decimal(let text): !(Double(text)?.isFinite ?? false)
        case .array(let items): items.contains(where: hasHugeNumber)
        case .map(let fields): fields.contains { hasHugeNumber($0.value) }
        default: false
        }
    }

    private static func agrees(_ value: RecordValue, _ object: Any) -> Bool {
        switch value {
        case .null:
            return object is NSNull
        case .bool(let bool):
            return (object as? Bool) == bool
        case .int(let int):
            guard let number = object as? NSNumber else { return false }
            return number.int64Value == int || number.doubleValue == Double(int)
        case .uint(let uint):
            guard let number = object as? NSNumber else { return false }
            return number.uint64Value == uint || number.doubleValue == Double(uint)
        case .decimal(let text):
            // Foundation reads long numbers as a Decimal of 38 digits: equal to a Double's precision.
            guard let number = object as? NSNumber, let double = Double(text) else { return false }
            return abs(number.doubleValue - double) <= abs(double) * 1e-12
        case .string(let string):
            return (object as? String) == string
        case .array(let items):
            guard let array = object as? [Any], array.count == items.count else { return false }
            return zip(items, array).allSatisfy { agrees($0, $1) }
        case .map(let fields):
            guard let dictionary = object as? [String: Any], dictionary.count == fields.count else { return false }
            return fields.allSatisfy { field in dictionary[field.name].map { agrees(field.value, $0) } ?? false }
        default:
            return false
        }
    }
}
