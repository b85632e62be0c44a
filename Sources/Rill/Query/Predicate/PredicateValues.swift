import Foundation

/// Captured predicate values as `RecordValue`s, and which Swift types compare in a predicate
/// exactly as their stored form does in `QueryEvaluator`.
package enum PredicateValues {
    /// The stored form of a value captured by a predicate, nil for types without one.
    ///
    /// Covers Bool, integers (up to 64 bits), Double, Float, String, Date, UUID, absolute URL, Data,
    /// Decimal, optionals, enums with String or integer raw values, and arrays and sets of those.
    package static func literal<Value>(_ value: Value) -> RecordValue? {
        // The commonest types by identity first: each failed cast from `Any` costs a lookup.
        if Value.self == Int.self, let int = value as? Int { return .int(Int64(int)) }
        if Value.self == String.self, let string = value as? String { return .string(string) }
        if Value.self == Double.self, let double = value as? Double { return .double(double) }
        if Value.self == Bool.self, let bool = value as? Bool { return .bool(bool) }
        if Value.self == Date.self, let date = value as? Date { return .date(date) }
        return literal(any: value)
    }

    private static func literal(any value: Any) -> RecordValue? {
        if let optional = value as? any OptionalValue {
            guard let wrapped = optional.predicateWrappedValue else { return .null }
            return literal(any: wrapped)
        }
        switch value {
        case let bool as Bool: return .bool(bool)
        case let string as String: return .string(string)
        case let double as Double: return .double(double)
        case let float as Float: return .float(float)
        case let date as Date: return .date(date)
        case let uuid as UUID: return .uuid(uuid)
        case let url as URL:
            // A relative URL equals no stored URL in Swift (its base differs), whatever its text.
            guard url.baseURL == nil else { return nil }
            return .url(url.absoluteString)
        case let data as Data: return .data(data)
        case let decimal as Decimal: return .decimal(decimal.description)
        case let integer as any FixedWidthInteger: return integerLiteral(integer)
        case let sequence as any LiteralSequence:
            var items: [RecordValue] = []
            for element in sequence.predicateElements {
                guard let item = literal(any: element) else { return nil }
                items.append(item)
            }
            return .array(items)
        case let raw as any RawRepresentable:
            guard isRawValueType(rawValueType(of: raw)) else { return nil }
            return literal(any: raw.rawValue)
        default:
            return nil
        }
    }

    /// Whether `==` on values of `type` agrees with `QueryEvaluator`'s equality on their stored
    /// form: the scalar types of `literal(_:)` (not Decimal, which the evaluator compares as
    /// Double), enums with String or integer raw values, optionals and arrays of those.
    package static func supportsEquality(_ type: Any.Type) -> Bool {
        // Plain scalars first: they are told by identity, the rest by conformance lookups.
        if supportsOrdering(type) || type == Bool.self || type == UUID.self { return true }
        if let optional = type as? any OptionalValue.Type {
            let wrapped = optional.predicateWrappedType
            return !(wrapped is any OptionalValue.Type) && supportsEquality(wrapped)
        }
        if let array = type as? any ArrayValue.Type { return supportsEquality(array.predicateElementType) }
        if supportsOrdering(type) || type == Bool.self || type == UUID.self || type == URL.self || type == Data.self {
            return true
        }
        if let raw = type as? any RawRepresentable.Type { return isRawValueType(rawValueType(of: raw)) }
        return false
    }

    /// Whether `<` on values of `type` agrees with `QueryEvaluator`'s order on their stored form:
    /// the standard integer types, Double, Float, String and Date.
    package static func supportsOrdering(_ type: Any.Type) -> Bool {
        isInteger(type) || type == Double.self || type == Float.self || type == String.self || type == Date.self
    }

    /// Whether `type` is a standard signed integer type (up to 64 bits).
    package static func isSignedInteger(_ type: Any.Type) -> Bool {
        type == Int.self || type == Int8.self || type == Int16.self || type == Int32.self || type == Int64.self
    }

    /// Whether `type` is a standard integer type (up to 64 bits).
    package static func isInteger(_ type: Any.Type) -> Bool {
        isSignedInteger(type) || type == UInt.self || type == UInt8.self || type == UInt16.self
            || type == UInt32.self || type == UInt64.self
    }

    /// Whether `type` is an Optional.
    package static func isOptional(_ type: Any.Type) -> Bool {
        type is any OptionalValue.Type
    }

    /// Whether `type` is an array or a set (stored as an array either way).
    package static func isStoredAsArray(_ type: Any.Type) -> Bool {
        type is any LiteralSequence.Type
    }

    private static func integerLiteral(_ integer: any FixedWidthInteger) -> RecordValue? {
        guard isInteger(type(of: integer)) else { return nil }
        if type(of: integer).isSigned {
            return Int64(exactly: integer).map(RecordValue.int)
        }
        return UInt64(exactly: integer).map(RecordValue.uint)
    }

    private static func isRawValueType(_ type: Any.Type) -> Bool {
        type == String.self || isInteger(type)
    }

    private static func rawValueType<T: RawRepresentable>(of type: T.Type) -> Any.Type {
        T.RawValue.self
    }

    private static func rawValueType<T: RawRepresentable>(of value: T) -> Any.Type {
        T.RawValue.self
    }
}

private protocol OptionalValue {
    static var predicateWrappedType: Any.Type { get }
    var predicateWrappedValue: Any? { get }
}

extension Optional: OptionalValue {
    fileprivate static var predicateWrappedType: Any.Type { Wrapped.self }
    fileprivate var predicateWrappedValue: Any? { self.map { $0 as Any } }
}

private protocol ArrayValue {
    static var predicateElementType: Any.Type { get }
}

extension Array: ArrayValue {
    fileprivate static var predicateElementType: Any.Type { Element.self }
}

private protocol LiteralSequence {
    var predicateElements: [Any] { get }
}

extension Array: LiteralSequence {
    fileprivate var predicateElements: [Any] { map { $0 as Any } }
}

extension Set: LiteralSequence {
    fileprivate var predicateElements: [Any] { map { $0 as Any } }
}
