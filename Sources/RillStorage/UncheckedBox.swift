/// A box that crosses a thread boundary while its owner is provably blocked waiting for it.
final class UncheckedBox<Value>: @unchecked Sendable {
    var value: Value
    init(_ value: Value) { self.value = value }
}
