import Foundation

/// The rows of a `FamilyDescriptor<Base>`: models of every kind of a family, decoded as the kind
/// each record names. Rows compare by model (the sort's key paths are the base's, which name no
/// stored field), so `orderPaths` is nil.
struct FamilyRowSource<Base: Sendable>: LiveRowSource {
    let descriptor: FamilyDescriptor<Base>
    let family: ModelFamily
    let predicate: FamilyPredicate<Base>
    let filter: QueryNode?
    let dependencies: Set<String>?
    private let decoders: FamilyDecoders<Base>

    init(_ descriptor: FamilyDescriptor<Base>, family: ModelFamily) {
        self.descriptor = descriptor
        self.family = family
        let predicate = FamilyPredicate(descriptor.predicate, family: family)
        self.predicate = predicate
        filter = predicate.exact
        var fields: Set<String>? = []
        if let filter {
            fields = filter.topLevelFields
        } else if descriptor.predicate != nil {
            fields = nil
        }
        if !descriptor.sortBy.isEmpty { fields = nil }
        dependencies = fields
        decoders = FamilyDecoders(family)
    }

    var entityName: String { family.entityName }
    var offset: Int? { descriptor.fetchOffset }
    var limit: Int? { descriptor.fetchLimit }
    var orderPaths: [QuerySortKey]? { nil }

    func row(
        for change: DecodedChange, filtered: Bool, order: (RecordValue) throws -> [UInt8]?
    ) throws -> LiveEntry? {
        guard let record = change.change.record else { return nil }
        if !filtered, let filter {
            guard let value = try change.recordValue(), QueryEvaluator.matches(filter, value) else { return nil }
        }
        let model = try decoders.decode(record, key: change.key)
        if filter == nil, try !predicate.evaluate(model) { return nil }
        return FamilyRow(key: change.key, model: model)
    }

    func row(record: [UInt8], key: [UInt8], order: (RecordValue) throws -> [UInt8]?) throws -> LiveEntry? {
        if let filter {
            guard QueryEvaluator.matches(filter, try Self.recordValue(record, key: key, entity: family.entityName))
            else { return nil }
        }
        let model = try decoders.decode(record, key: key)
        if filter == nil, try !predicate.evaluate(model) { return nil }
        return FamilyRow(key: key, model: model)
    }

    func fetch(
        limit: Int?, in transaction: StoreSnapshot, store: Store, order: (RecordValue, [UInt8]) throws -> [UInt8]?
    ) throws -> [LiveEntry] {
        guard let entity = try store.entity(named: family.entityName) else { return [] }
        var descriptor = self.descriptor
        descriptor.fetchOffset = nil
        descriptor.fetchLimit = limit
        let executor = FamilyExecutor(
            store: store, entity: entity, family: family, descriptor: descriptor, staged: Dictionary(),
            transaction: transaction, predicate: predicate)
        return try executor.rows().map { FamilyRow(key: $0.key, model: $0.model) }
    }

    func compare(_ lhs: LiveEntry, _ rhs: LiveEntry) -> ComparisonResult {
        let (left, right) = (FamilyRow<Base>.model(lhs), FamilyRow<Base>.model(rhs))
        for sort in descriptor.sortBy {
            let order = sort.totalCompare(left, right)
            if order != .orderedSame { return order }
        }
        return .orderedSame
    }

    static func element(_ row: LiveEntry) -> Base { FamilyRow<Base>.model(row) }
}
