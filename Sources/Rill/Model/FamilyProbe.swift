import Foundation
import RillLocks

/// Which stored field a key path on a family's base reads in every kind.
///
/// The key path of a protocol requirement (`\any Recipe.name`) prints with no name
/// (`\Recipe.<computed 0x… (String)>`): what it reads depends on the kind, and can be a stored
/// property or a computed one. So each kind is probed: a value of it with a distinct value in
/// every field (`DistinctProbeDecoder`), twice with different values, is stored as a record and
/// read through the key path. When, in both probes of every kind, exactly one field of the
/// record holds what the key path gave, and it is the same field in every kind, the key path
/// reads that field; otherwise it is not translated (it is then evaluated on the models).
final class FamilyProbe: Sendable {
    /// Two probes of each kind: the values, as the base, and their records.
    private let probes: [[(value: any Sendable, record: RecordValue)]]
    private let resolved = Lock<[FamilyTranslation.KeyPathKey: [String]?]>([:])

    private init(probes: [[(value: any Sendable, record: RecordValue)]]) { self.probes = probes }

    /// The probe of `family`, made once per family; nil when some kind refuses the probe's values.
    static func of<Base>(_ family: ModelFamily, base: Base.Type) -> FamilyProbe? {
        let key = family.base
        if let known = cache.withLock({ $0[key] }) { return known }
        var probes: [[(value: any Sendable, record: RecordValue)]] = []
        for kind in family.kinds {
            guard let pair = probe(kind.type, in: family, as: Base.self) else { return nil }
            probes.append(pair)
        }
        let probe = FamilyProbe(probes: probes)
        cache.withLock { $0[key] = probe }
        return probe
    }

    private static let cache = Lock<[ObjectIdentifier: FamilyProbe]>([:])

    private static func probe<K: PersistentModel, Base>(
        _ type: K.Type, in family: ModelFamily, as base: Base.Type
    ) -> [(value: any Sendable, record: RecordValue)]? {
        var pair: [(value: any Sendable, record: RecordValue)] = []
        for start in [1_000_003, 2_000_018] {
            guard let model = DistinctProbeDecoder.value(of: K.self, base: start),
                let bytes = try? K.encodeStored(model),
                let record = try? bytes.withUnsafeBytes({ try RecordValue(record: $0) })
            else { return nil }
            pair.append((model, record))
        }
        return pair
    }

    /// The positions of the kinds whose values pass `test`.
    func kindIndexes(where test: (Any) -> Bool) -> [Int] {
        probes.indices.filter { test(probes[$0][0].value) }
    }

    /// The stored field path `keyPath` (rooted at `Root`) reads in every kind whose values are
    /// `Root`s; nil when not one, or when no kind's are.
    func fieldPath<Root>(of keyPath: AnyKeyPath, root: Root.Type) -> [String]? {
        let key = FamilyTranslation.KeyPathKey(keyPath: keyPath)
        if let known = resolved.withLock({ $0[key] }) { return known }
        let path = compute(keyPath, root: root)
        resolved.withLock { table in
            if table.count < 1_024 { table[key] = .some(path) }
        }
        return path
    }

    private func compute<Root>(_ keyPath: AnyKeyPath, root: Root.Type) -> [String]? {
        guard let partial = keyPath as? PartialKeyPath<Root> else { return nil }
        var found: [String]?
        for pair in probes where pair[0].value is Root {
            for probe in pair {
                guard let value = probe.value as? Root, let read = ProbeRecords.recordValue(value[keyPath: partial])
                else {
                    return nil
                }
                var paths: [[String]] = []
                ProbeRecords.collect(read, in: probe.record, path: [], into: &paths)
                guard paths.count == 1, found == nil || found == paths[0] else { return nil }
                found = paths[0]
            }
        }
        return found
    }
}
