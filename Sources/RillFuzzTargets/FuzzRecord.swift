import Foundation

/// A `Codable` record with a field of every kind that the record format stores, built from a
/// fuzzing input (no NaN, so that `==` can compare it with its decoded copy).
struct FuzzRecord: Codable, Equatable {
    enum Kind: String, Codable { case plain, special }

    struct Nested: Codable, Equatable {
        var name: String
        var values: [Int16]
        var next: [Nested]
    }

    var int: Int
    var int8: Int8
    var uint16: UInt16
    var uint64: UInt64
    var float: Float
    var double: Double?
    var string: String
    var data: Data
    var date: Date
    var uuid: UUID
    var decimal: Decimal
    var url: URL?
    var kind: Kind
    var flags: [Bool]
    var nested: Nested?

    init(_ input: inout FuzzInput) {
        int = Int(truncatingIfNeeded: input.uint64())
        int8 = Int8(bitPattern: input.byte())
        uint16 = UInt16(input.int(in: 0...65535))
        uint64 = input.uint64()
        float = Self.number(Float(bitPattern: UInt32(truncatingIfNeeded: input.uint64())))
        double = input.bool() ? Self.number(Double(bitPattern: input.uint64())) : nil
        string = RecordValueBuilder.text(&input)
        data = Data(input.take(input.int(in: 0...32)))
        date = Date(timeIntervalSinceReferenceDate: Self.number(Double(bitPattern: input.uint64())))
        uuid = RecordValueBuilder.uuid(&input)
        decimal = Decimal(string: RecordValueBuilder.decimalText(&input)) ?? 0
        url = input.bool() ? URL(string: "https://example.com/\(input.int(in: 0...999))?q=\(input.byte())") : nil
        kind = input.bool() ? .special : .plain
        flags = (0..<input.int(in: 0...4)).map { _ in input.bool() }
        nested = input.bool() ? Self.nested(&input, depth: 0) : nil
    }

    private static func nested(_ input: inout FuzzInput, depth: Int) -> Nested {
        Nested(
            name: RecordValueBuilder.text(&input),
            values: (0..<input.int(in: 0...4)).map { _ in Int16(truncatingIfNeeded: input.int(in: 0...65535)) },
            next: depth < 3 ? (0..<input.int(in: 0...2)).map { _ in nested(&input, depth: depth + 1) } : [])
    }

    private static func number<F: FloatingPoint>(_ value: F) -> F { value.isNaN ? 0 : value }
}
