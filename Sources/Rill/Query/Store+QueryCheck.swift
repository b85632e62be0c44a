import Foundation
import Synchronization

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
    func check(_ query: Query, entity: EntityStorage) throws {
        let shape = try recordShape(of: entity, declared: [:], fresh: false)
        let suspected = QueryValidator.problems(in: query, shape: shape)
        guard !suspected.isEmpty else { return }
        if let problem = try confirmed(suspected, in: entity).first {
            throw problem.error(in: query.source)
        }
    }

    /// The problems that no stored record of `entity` disproves. What the records that do
    /// disprove one hold is added to the remembered shape, so the next query does not look again.
    private func confirmed(_ problems: [QueryProblem], in entity: EntityStorage) throws -> [QueryProblem] {
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
                    learned = learned.map { $0.merged(with: RecordShape(record)) } ?? RecordShape(record)
                }
                return !open.isEmpty
            }
        }
        if let learned {
            recordShapes.withLock { shapes in
                if let known = shapes[entity.name] { shapes[entity.name] = known.merged(with: learned) }
            }
        }
        return problems.indices.filter { !refuted.contains($0) }.map { problems[$0] }
    }
}
