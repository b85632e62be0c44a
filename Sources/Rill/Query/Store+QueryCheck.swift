import Foundation
import RillLocks

extension Store {
    /// Checks a text query against what its entity's records hold: a field that none of them
    /// has, or a comparison that can never hold because of the kinds involved, is an error
    /// rather than an empty answer (see `QueryValidator` for what is judged).
    ///
    /// The entity's fields are what writes given as JSON take it to have (`recordShape(of:)`:
    /// learned from up to 64 stored records, or the description an import declared). A problem
    /// found with that sample is reported only once every stored record has been read and none
    /// disproves it, so a field or a kind that only later records have is never refused. An
    /// entity with no records and no description has no known fields: every query is accepted.
    /// An entity the store lacks is left to the query itself to report.
    ///
    /// Reading the store, the check opens a read transaction of its own: call it before opening
    /// one to run the query in.
    ///
    /// - Throws: `RillError(.unknownField)` or `RillError(.kindMismatch)` with the first problem
    ///   in the order of the query text, naming the entity, the field and its column; for a query
    ///   from text, the underlying error is a `QueryParseError` whose description shows the query
    ///   with a caret under the field.
    package func check(_ query: Query) throws {
        guard let entity = try entity(named: query.entity) else { return }
        try check(query, entity: entity)
    }

    /// `check(_:)` for a query whose entity's storage the caller holds already.
    ///
    /// - Parameter memo: what is remembered of the query's shape, when the caller looked it up
    ///   already (see `QueryShapeMemo`).
    func check(_ query: Query, entity: EntityStorage, memo: QueryShapeMemo.Entry? = nil) throws {
        guard !entity.relationships.isEmpty else {
            // The usual case, without a copy of the query or a table of related records.
            try check(query, entity: entity, remembering: memo ?? queryShapes.entry(for: query))
            return
        }
        try checkSortKeys(of: query, relationships: entity.relationships)
        var shape = try recordShape(of: entity, declared: [:], fresh: false)
        var checked = query
        var related: [String: QueryValidator.Related] = [:]
        if let relationships = QueryRelationships(query.predicate, relationships: entity.relationships) {
            // The rewritten predicate is checked, against the record's shape with the related
            // entities' beside it.
            checked.predicate = relationships.predicate
            if case .map(var fields) = shape {
                for read in relationships.reads {
                    let relationship = read.relationship
                    let target = try self.entity(named: relationship.entity)
                    let targetShape = try target.map { try recordShape(of: $0, declared: [:], fresh: false) } ?? .any
                    fields.append(
                        (
                            read.name,
                            relationship.kind == .reference || relationship.kind == .requiredReference
                                ? targetShape : .array(targetShape)
                        ))
                    related[read.name] = QueryValidator.Related(field: relationship.field, entity: relationship.entity)
                }
                shape = .map(fields)
            }
        }
        try report(
            QueryValidator.problems(in: checked, shape: shape, related: related), of: query, in: entity,
            related: related)
    }

    /// Checks a query of an entity without relationships, unless its shape passed against the
    /// record shapes of this generation; marks the shape checked when it passes with none of its
    /// problems even suspected, against the shape the table holds for the entity.
    private func check(_ query: Query, entity: EntityStorage, remembering memo: QueryShapeMemo.Entry) throws {
        let generation = recordShapes.withLock { $0.generation }
        if memo.isChecked(at: generation) { return }
        let shape = try recordShape(of: entity, declared: [:], fresh: false)
        let suspected = QueryValidator.problems(in: query, shape: shape)
        guard suspected.isEmpty else {
            try report(suspected, of: query, in: entity, related: [:])
            return
        }
        // The table unchanged since the generation was read: `shape` is the one it holds.
        let (now, held) = recordShapes.withLock { ($0.generation, $0.byEntity[entity.name] != nil) }
        if now == generation, held { memo.markChecked(at: generation) }
    }

    /// Throws the first of the `suspected` problems of `query` that no stored record disproves.
    private func report(
        _ suspected: [QueryProblem], of query: Query, in entity: EntityStorage,
        related: [String: QueryValidator.Related]
    ) throws {
        guard !suspected.isEmpty else { return }
        if let problem = try confirmed(suspected, in: entity, related: related).first {
            throw problem.error(in: query.source)
        }
    }

    /// Refuses a sort key that reads through a relationship: rows are ordered by their own fields.
    private func checkSortKeys(of query: Query, relationships: [RelationshipSchema]) throws {
        for key in query.sort {
            guard let first = key.path.first, let relationship = relationships.first(where: { $0.field == first }),
                key.path.count > 1 || relationship.kind == .inverse
            else { continue }
            let written = key.path.joined(separator: ".")
            let column = query.source?.paths.last { $0.path == key.path && !$0.isElement }?.column
            throw QueryProblem(
                code: .unknownField,
                message:
                    "sort by \(written) reads through the relationship \(query.entity).\(first) to "
                    + "\(relationship.entity): a sort key reads the record's own fields",
                column: column, evidence: nil
            ).error(in: query.source)
        }
    }

    /// The problems that no stored record of `entity` disproves. What the records that do
    /// disprove one hold is added to the remembered shape, so the next query does not look again.
    private func confirmed(
        _ problems: [QueryProblem], in entity: EntityStorage, related: [String: QueryValidator.Related] = [:]
    ) throws -> [QueryProblem] {
        guard related.isEmpty else { return try confirmed(problems, in: entity, throughRelated: related) }
        var open = problems.indices.filter { problems[$0].evidence != nil }
        guard !open.isEmpty else { return problems }
        var refuted: Set<Int> = []
        var learned: RecordShape?
        let fields = open.map { problems[$0].evidence?.topLevelField }
        let named: Set<String>? = fields.contains(nil) ? nil : Set(fields.compactMap { $0 })
        _ = try read { txn in
            // Records of earlier versions count as the current schema reads them (a renamed
            // field is read under its earlier name too).
            let evolution = try evolution(of: entity.name, in: txn)
            let wanted = evolution.map { $0.dependencies(named) } ?? named
            return try Self.forEachStoredRecord(of: entity, in: txn) { key, bytes in
                let stored = try Self.recordValue(bytes, key: key, entity: entity.name, fields: wanted)
                let record = evolution?.evolve(stored) ?? stored
                let before = open.count
                open.removeAll { index in
                    guard problems[index].isRefuted(by: record) else { return false }
                    refuted.insert(index)
                    return true
                }
                if open.count < before {
                    learned = learned.map { $0.union(with: RecordShape(record)) } ?? RecordShape(record)
                }
                return !open.isEmpty
            }
        }
        if let learned {
            recordShapes.withLock { shapes in
                if let known = shapes.byEntity[entity.name] {
                    shapes.byEntity[entity.name] = known.merged(with: learned)
                }
            }
        }
        return problems.indices.filter { !refuted.contains($0) }.map { problems[$0] }
    }

    /// `confirmed(_:in:related:)` for a query that reads related records: a problem about them
    /// is looked for in the related entity's records (its evidence read from each of them), the
    /// others in the entity's own.
    private func confirmed(
        _ problems: [QueryProblem], in entity: EntityStorage, throughRelated related: [String: QueryValidator.Related]
    ) throws -> [QueryProblem] {
        var own: [Int] = []
        var byEntity: [String: [(index: Int, problem: QueryProblem)]] = [:]
        for (index, problem) in problems.enumerated() {
            if let evidence = problem.evidence, let name = evidence.topLevelField, let read = related[name] {
                var rebased = problem
                rebased.evidence = evidence.rebased()
                byEntity[read.entity, default: []].append((index, rebased))
            } else {
                own.append(index)
            }
        }
        // The entity's own problems that its records confirm: a subset, in order.
        let ownConfirmed = try confirmed(own.map { problems[$0] }, in: entity)
        var keptOwn: Set<Int> = []
        var next = 0
        for index in own where next < ownConfirmed.count {
            if ownConfirmed[next].message == problems[index].message,
                ownConfirmed[next].column == problems[index].column
            {
                keptOwn.insert(index)
                next += 1
            }
        }
        var refuted: Set<Int> = []
        for (name, list) in byEntity {
            guard let target = try self.entity(named: name) else { continue }
            var open = list.filter { $0.problem.evidence != nil }
            guard !open.isEmpty else { continue }
            _ = try read { txn in
                let evolution = try evolution(of: name, in: txn)
                return try Self.forEachStoredRecord(of: target, in: txn) { key, bytes in
                    let stored = try Self.recordValue(bytes, key: key, entity: name)
                    let record = evolution?.evolve(stored) ?? stored
                    open.removeAll { item in
                        guard item.problem.isRefuted(by: record) else { return false }
                        refuted.insert(item.index)
                        return true
                    }
                    return !open.isEmpty
                }
            }
        }
        return problems.indices.filter { index in
            own.contains(index) ? keptOwn.contains(index) : !refuted.contains(index)
        }.map { problems[$0] }
    }
}
