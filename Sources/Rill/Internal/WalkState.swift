/// A value that the local functions and closures of one walk share, read and written without
/// dynamic exclusivity checks.
///
/// A `var` that local functions capture lives in a box, and each access to it checks at run time
/// that no other access overlaps it: about forty instructions, on every entry of an index walk.
/// A walk runs on one thread, and its functions never overlap their accesses to this value.
final class WalkState<Value> {
    @exclusivity(unchecked) var value: Value

    init(_ value: Value) {
        self.value = value
    }
}
