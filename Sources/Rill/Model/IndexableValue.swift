import Foundation

/// A value type that an index can order: numbers, strings, `Bool`, `Date`, `UUID`, `URL`,
/// `Decimal`, their optionals, and enums whose raw value is one of those (declare
/// `extension MyEnum: IndexableValue {}`).
public protocol IndexableValue {}

extension Int: IndexableValue {}
extension Int8: IndexableValue {}
extension Int16: IndexableValue {}
extension Int32: IndexableValue {}
extension Int64: IndexableValue {}
extension UInt: IndexableValue {}
extension UInt8: IndexableValue {}
extension UInt16: IndexableValue {}
extension UInt32: IndexableValue {}
extension UInt64: IndexableValue {}
extension Double: IndexableValue {}
extension Float: IndexableValue {}
extension Bool: IndexableValue {}
extension String: IndexableValue {}
extension Date: IndexableValue {}
extension UUID: IndexableValue {}
extension URL: IndexableValue {}
extension Decimal: IndexableValue {}
extension Optional: IndexableValue where Wrapped: IndexableValue {}

/// A reference is stored as the referenced model's identifier, which an index orders: an index on
/// a reference field serves `$0.recipe?.id == id`.
extension Reference: IndexableValue {}
