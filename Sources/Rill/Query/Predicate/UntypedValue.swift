import Foundation

/// A value an expression computed that its declared output type cannot hold: the exact result of
/// integer arithmetic past the type's range, or null (a division by zero, a reversed range). From
/// there on, the expressions that use it compute as `QueryEvaluator` does.
struct UntypedValue {
    var value: RecordValue

    init(_ value: RecordValue) { self.value = value }

    static let null = UntypedValue(.null)
}
