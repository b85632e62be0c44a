/// A screen compiled against its entity's `FieldTable`: a plain value, so that the follower can
/// keep the tests of all of an entity's queries side by side and run them in one sweep.
///
/// The sweep runs a test through a pointer to it (``admits(_:_:)``): a method called on a value
/// read through a pointer gets a copy of the value, and copying a thousand tests per change costs
/// a thousand reference counts on cold memory.
struct ScreenTest {
    struct Condition {
        var slot: Int
        var comparison: QueryComparison
        var constant: RecordValue

        static func holds(
            _ condition: UnsafePointer<Condition>, for change: DecodedChange, unshared: Bool = false
        ) throws -> Bool {
            let slot = condition.pointee.slot
            guard let value = try unshared ? change.unsharedField(slot: slot) : change.field(slot: slot) else {
                return false
            }
            return QueryEvaluator.compare(condition.pointee.comparison, value, condition.pointee.constant)
        }
    }

    /// True when an update that changed none of the fields in `dependencyMask` cannot matter.
    var skipsUnrelatedUpdates = false
    /// The slots of the fields the query reads, as bits.
    var dependencyMask: UInt64 = 0
    /// How many conditions there are: the first two are kept inline (most filters have no more).
    private var conditionCount = 0
    private var first = Condition(slot: 0, comparison: .equal, constant: .null)
    private var second = Condition(slot: 0, comparison: .equal, constant: .null)
    private var rest: [Condition] = []

    /// The conditions, in order.
    var conditions: [Condition] {
        [first, second].prefix(conditionCount) + rest
    }

    mutating func append(_ condition: Condition) {
        switch conditionCount {
        case 0: first = condition
        case 1: second = condition
        default: rest.append(condition)
        }
        conditionCount += 1
    }

    /// False when `change` (an insert or update) cannot make the record match the query whose
    /// test `test` points to. `unshared`: no other thread has the change yet (see
    /// `DecodedChange.unsharedField(slot:)`).
    static func admits(
        _ test: UnsafePointer<ScreenTest>, _ change: DecodedChange, unshared: Bool = false
    ) throws -> Bool {
        if test.pointee.skipsUnrelatedUpdates, change.kind == .update,
            change.changedMask & test.pointee.dependencyMask == 0
        {
            return false
        }
        return try conditionsHold(test, for: change, unshared: unshared)
    }

    /// Whether the record after `change` passes every condition of the test `test` points to.
    static func conditionsHold(
        _ test: UnsafePointer<ScreenTest>, for change: DecodedChange, unshared: Bool = false
    ) throws -> Bool {
        let count = test.pointee.conditionCount
        guard count > 0 else { return true }
        let raw = UnsafeRawPointer(test)
        let first = (raw + firstOffset).assumingMemoryBound(to: Condition.self)
        if try !Condition.holds(first, for: change, unshared: unshared) { return false }
        guard count > 1 else { return true }
        let second = (raw + secondOffset).assumingMemoryBound(to: Condition.self)
        if try !Condition.holds(second, for: change, unshared: unshared) { return false }
        guard count > 2 else { return true }
        return try test.pointee.rest.withUnsafeBufferPointer { rest in
            for index in rest.indices
            where try !Condition.holds(rest.baseAddress! + index, for: change, unshared: unshared) {
                return false
            }
            return true
        }
    }

    private static let firstOffset = MemoryLayout<ScreenTest>.offset(of: \ScreenTest.first)!
    private static let secondOffset = MemoryLayout<ScreenTest>.offset(of: \ScreenTest.second)!
}
