extension Store {
    /// The storage of the entity `name`, or ``unknownEntityError(_:)`` when the store has none:
    /// the one lookup of every path that needs the entity to exist.
    package func existingEntity(_ name: String) throws -> EntityStorage {
        guard let entity = try entity(named: name) else { throw try unknownEntityError(name) }
        return entity
    }

    /// Throws ``unknownEntityError(_:)`` for the first of `names` (in sorted order) that is not
    /// one of the store's entities: a filter by entity names one the store has, as a query does.
    package func requireEntities(_ names: Set<String>?) throws {
        for name in (names ?? []).sorted() { _ = try existingEntity(name) }
    }

    /// The error for an entity the store does not have: it names the entities there are and
    /// says how to create the missing one, so that the first use of a store is not a dead end.
    ///
    /// Every path that looks an entity up by name (text queries, live queries, JSON writes,
    /// `rill get`, `rill watch`, the daemon) reports it with this message.
    package func unknownEntityError(_ name: String) throws -> RillError {
        let known = try entityNames()
        let has = known.isEmpty ? "it has none yet" : "it has: " + known.joined(separator: ", ")
        let description = #"{"entity":"\#(name)","identifier":"String"}"#
        return RillError(
            .unknownEntity,
            "the store has no entity \(name) (\(has)); create it by saving a model of it from Swift, or declare it "
                + "with `echo '\(description)' | rill import <store>` (identifier Int, String or UUID), "
                + "then add records with `rill insert`")
    }
}
