import Foundation

// Reads of the types a record stores natively, each a function of its own, chosen over the
// generic `decode(_:forKey:)` and `decodeIfPresent(_:forKey:)` wherever the field's type is one of
// them. The generic ones are not specialized for the caller's types (they are called from the
// model's module), so each of their reads asks at run time which type it reads; these read the
// field in stored order in one pass (`RecordDecoder.nextField`), and leave anything else (another
// order, another stored type, a damaged record) to the generic read, which gives the same values
// and errors.
extension ModelRecord {
    /// The value of the field `key`.
    public func decode(_ type: Int.Type = Int.self, forKey key: String) throws -> Int {
        try decoder.nextField(named: key, { $0.nextInteger(Int.self, at: $1) })
            ?? decoder.decodeField(Int.self, named: key)
    }

    /// The value of the field `key`.
    public func decode(_ type: Int64.Type = Int64.self, forKey key: String) throws -> Int64 {
        try decoder.nextField(named: key, { $0.nextInteger(Int64.self, at: $1) })
            ?? decoder.decodeField(Int64.self, named: key)
    }

    /// The value of the field `key`.
    public func decode(_ type: Double.Type = Double.self, forKey key: String) throws -> Double {
        try decoder.nextField(named: key, { $0.nextDouble(at: $1) }) ?? decoder.decodeField(Double.self, named: key)
    }

    /// The value of the field `key`.
    public func decode(_ type: String.Type = String.self, forKey key: String) throws -> String {
        try decoder.nextField(named: key, { $0.nextString(at: $1) }) ?? decoder.decodeField(String.self, named: key)
    }

    /// The value of the field `key`.
    public func decode(_ type: Bool.Type = Bool.self, forKey key: String) throws -> Bool {
        try decoder.nextField(named: key, { $0.nextBool(at: $1) }) ?? decoder.decodeField(Bool.self, named: key)
    }

    /// The value of the field `key`.
    public func decode(_ type: Date.Type = Date.self, forKey key: String) throws -> Date {
        try decoder.nextField(named: key, { $0.nextDate(at: $1) }) ?? decoder.decodeField(Date.self, named: key)
    }

    /// The value of the field `key`.
    public func decode(_ type: UUID.Type = UUID.self, forKey key: String) throws -> UUID {
        try decoder.nextField(named: key, { $0.nextUUID(at: $1) }) ?? decoder.decodeField(UUID.self, named: key)
    }

    /// The value of the field `key`, or nil when the record lacks it or holds null there.
    public func decodeIfPresent(_ type: Int.Type = Int.self, forKey key: String) throws -> Int? {
        try decoder.nextFieldIfPresent(named: key, { $0.nextInteger(Int.self, at: $1) })
            ?? decoder.decodeFieldIfPresent(Int.self, named: key)
    }

    /// The value of the field `key`, or nil when the record lacks it or holds null there.
    public func decodeIfPresent(_ type: Double.Type = Double.self, forKey key: String) throws -> Double? {
        try decoder.nextFieldIfPresent(named: key, { $0.nextDouble(at: $1) })
            ?? decoder.decodeFieldIfPresent(Double.self, named: key)
    }

    /// The value of the field `key`, or nil when the record lacks it or holds null there.
    public func decodeIfPresent(_ type: String.Type = String.self, forKey key: String) throws -> String? {
        try decoder.nextFieldIfPresent(named: key, { $0.nextString(at: $1) })
            ?? decoder.decodeFieldIfPresent(String.self, named: key)
    }

    /// The value of the field `key`, or nil when the record lacks it or holds null there.
    public func decodeIfPresent(_ type: Bool.Type = Bool.self, forKey key: String) throws -> Bool? {
        try decoder.nextFieldIfPresent(named: key, { $0.nextBool(at: $1) })
            ?? decoder.decodeFieldIfPresent(Bool.self, named: key)
    }

    /// The value of the field `key`, or nil when the record lacks it or holds null there.
    public func decodeIfPresent(_ type: Date.Type = Date.self, forKey key: String) throws -> Date? {
        try decoder.nextFieldIfPresent(named: key, { $0.nextDate(at: $1) })
            ?? decoder.decodeFieldIfPresent(Date.self, named: key)
    }
}
