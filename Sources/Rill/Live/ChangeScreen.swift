/// The follower's first, cheap test of an insert or update of a record a live query does not
/// hold: false when the change cannot make the record enter the query. It is asked of the
/// entity's queries for every such change (of all of them, or of those an index of their number
/// bounds offers: `ScreenRangeIndex`), so it must cost next to nothing.
///
/// It knows the top-level fields the query reads (an update that changed none of them cannot
/// matter) and the comparisons of a top-level field with a constant among the conjuncts of the
/// query's filter (a record failing one of them does not match). Bound to its entity's
/// `FieldTable`, it tests a `DecodedChange` with a mask and array lookups: the change's field
/// values are read once, for all the queries.
///
/// Owned by the follower's thread, like the query it screens for.
final class ChangeScreen {
    typealias Condition = (field: String, comparison: QueryComparison, constant: RecordValue)

    /// The top-level fields the query reads; nil when not known (any field).
    private var dependencies: Set<String>?
    private var conditions: [Condition] = []
    /// True when the filter is nothing but `conditions`.
    private var filterIsConditions = false

    /// The table this screen is compiled against, once bound.
    private var table: FieldTable?
    /// The screen compiled against `table`: what the follower runs (a copy of it, kept with
    /// those of the entity's other queries).
    var test: ScreenTest { compiled.pointee }
    /// Where `test` lives, so that it is run in place (see ``ScreenTest``).
    private let compiled: UnsafeMutablePointer<ScreenTest>

    init() {
        compiled = .allocate(capacity: 1)
        compiled.initialize(to: ScreenTest())
    }

    deinit {
        compiled.deinitialize(count: 1)
        compiled.deallocate()
    }

    /// Screens for a query that reads `dependencies` and whose filter is `filter`; without a
    /// filter, the conditions come from `necessary`, a condition every match meets (a partial
    /// translation of the predicate), which can reject but never decide.
    func reset(dependencies: Set<String>?, filter: QueryNode?, necessary: QueryNode? = nil) {
        self.dependencies = dependencies
        conditions = (filter ?? necessary).map(Self.conditions(of:)) ?? []
        if let filter {
            let conjuncts = if case .and(let operands) = filter { operands.count } else { 1 }
            filterIsConditions = conjuncts == conditions.count
        } else {
            filterIsConditions = false
        }
        if let table { compile(against: table) }
    }

    /// Compiles the screen against `table`, where the follower reads changes for it.
    func bind(to table: FieldTable) {
        self.table = table
        compile(against: table)
    }

    private func compile(against table: FieldTable) {
        var test = ScreenTest()
        if let dependencies {
            test.skipsUnrelatedUpdates = true
            for field in dependencies {
                let slot = table.slot(for: field)
                if slot < 64 { test.dependencyMask |= 1 << UInt64(slot) } else { test.skipsUnrelatedUpdates = false }
            }
        }
        for condition in conditions {
            test.append(
                ScreenTest.Condition(
                    slot: table.slot(for: condition.field), comparison: condition.comparison,
                    constant: condition.constant))
        }
        compiled.pointee = test
        table.generation += 1
    }

    /// True when the filter is nothing but the conditions (a conjunction of comparisons of
    /// top-level fields with constants): ``conditionsHold(for:)`` then decides whether a record matches.
    var decidesFilter: Bool { filterIsConditions && table != nil }

    /// Whether the record after `change` passes every condition.
    func conditionsHold(for change: DecodedChange) throws -> Bool {
        try ScreenTest.conditionsHold(compiled, for: change)
    }

    /// The conjuncts of `node` that compare a top-level field with a constant.
    private static func conditions(of node: QueryNode) -> [Condition] {
        let conjuncts: [QueryNode] = if case .and(let operands) = node { operands } else { [node] }
        return conjuncts.compactMap { conjunct in
            guard case .compare(let comparison, let lhs, let rhs) = conjunct else { return nil }
            switch (lhs, rhs) {
            case (.field(let path), .literal(let constant)) where path.count == 1:
                return (path[0], comparison, constant)
            case (.literal(let constant), .field(let path)) where path.count == 1:
                return (path[0], comparison.mirrored, constant)
            default:
                return nil
            }
        }
    }
}
