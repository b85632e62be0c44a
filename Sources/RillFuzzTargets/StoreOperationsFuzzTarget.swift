import Foundation
import Rill
import RillLocks

/// A sequence of operations decoded from the input (stage an insert or a delete, save, run a
/// query, start or stop a live query) on a fresh store, checked against a plain dictionary of
/// the saved items: every query's results equal a brute-force evaluation over the dictionary
/// (with and without indexes), and after each save every live query's results, and its previous
/// results with the changes it was told of applied, equal a fresh run.
package enum StoreOperationsFuzzTarget {
    /// What one live query's handler was told, in order.
    final class Events: Sendable {
        let received = Lock<[RecordLiveQuery.Event]>([])
        func append(_ event: RecordLiveQuery.Event) { received.withLock { $0.append(event) } }
        func take() -> [RecordLiveQuery.Event] {
            received.withLock { events in
                defer { events = [] }
                return events
            }
        }
    }

    /// A live query with the results its events add up to.
    struct Live {
        var query: FuzzQuery
        var live: RecordLiveQuery
        var events: Events
        var rows: [QueryRow]
    }

    /// The store of every input of this process: opening a store costs more than a hundred runs
    /// of the operations, so each input starts by emptying it instead.
    private static let shared = Lock<ModelContainer?>(nil)

    package static func run(_ data: [UInt8]) throws {
        try shared.withLock { container in
            if container == nil {
                let directory = directory()
                try? FileManager.default.removeItem(at: directory)
                atexit { try? FileManager.default.removeItem(at: StoreOperationsFuzzTarget.directory()) }
                container = try ModelContainer(
                    for: FuzzItem.self,
                    configurations: ModelConfiguration(url: directory, durability: .unsynced))
            }
            try run(data, container: container!)
        }
    }

    private static func directory() -> URL {
        FileManager.default.temporaryDirectory.appendingPathComponent("rill-fuzz-store-operations-\(getpid())")
    }

    private static func run(_ data: [UInt8], container: ModelContainer) throws {
        let store = container.store
        let context = ModelContext(container)
        for id in 0...15 { context.delete(FuzzItem(id: id, group: 0, score: 0, name: "")) }
        try context.save()
        var saved: [Int: FuzzItem] = [:]
        var staged: [Int: FuzzItem?] = [:]
        var lives: [Live] = []
        var input = FuzzInput(data)
        var operations = 0
        while !input.isAtEnd, operations < 64 {
            operations += 1
            switch input.int(in: 0...9) {
            case 0...2:
                let item = FuzzItem(
                    id: input.int(in: 0...15), group: input.int(in: 0...4), score: input.int(in: -9...9),
                    name: input.pick(FuzzQuery.names))
                context.insert(item)
                staged[item.id] = item
            case 3:
                let id = input.int(in: 0...15)
                context.delete(FuzzItem(id: id, group: 0, score: 0, name: ""))
                staged[id] = .some(nil)
            case 4, 5:
                try context.save()
                for (id, item) in staged { saved[id] = item }
                staged = [:]
                for index in lives.indices { try check(&lives[index], store: store, saved: saved) }
            case 6, 7:
                let query = FuzzQuery(&input)
                let expected = query.evaluate(Array(saved.values))
                let parsed = try QueryParser.parse(query.text)
                for forceScan in [false, true] {
                    let found = try store.run(parsed, forceScan: forceScan).map(identifier)
                    guard found == expected else {
                        throw FuzzFailure(
                            "\(query.text)\(forceScan ? " (scan)" : ""): \(found), brute force \(expected)")
                    }
                }
            case 8:
                guard lives.count < 3 else { fallthrough }
                let query = FuzzQuery(&input)
                let events = Events()
                let live = try RecordLiveQuery(try QueryParser.parse(query.text), store: store) { events.append($0) }
                let received = events.take()
                guard received.count == 1, case .initial(let rows, _) = received[0] else {
                    throw FuzzFailure("\(query.text): expected one initial event, got \(received)")
                }
                let expected = query.evaluate(Array(saved.values))
                guard rows.map(identifier) == expected else {
                    throw FuzzFailure("\(query.text): initial \(rows.map(identifier)), brute force \(expected)")
                }
                lives.append(Live(query: query, live: live, events: events, rows: rows))
            default:
                if !lives.isEmpty { lives.remove(at: input.int(in: 0...lives.count - 1)) }
            }
        }
    }

    /// Checks a live query after a save against a fresh run and the brute-force results.
    private static func check(_ live: inout Live, store: Store, saved: [Int: FuzzItem]) throws {
        try live.live.catchUp()
        let fresh = try store.run(live.live.query)
        let expected = live.query.evaluate(Array(saved.values))
        guard fresh.map(identifier) == expected else {
            throw FuzzFailure("\(live.query.text): a fresh run \(fresh.map(identifier)), brute force \(expected)")
        }
        var rows = live.rows
        for event in live.events.take() {
            switch event {
            case .change(let change): change.apply(to: &rows)
            case .progress: continue
            case .initial: throw FuzzFailure("\(live.query.text): a second initial event")
            case .failed(let error): throw FuzzFailure("\(live.query.text): failed: \(error)")
            }
        }
        guard rows.map(\.record) == fresh.map(\.record), rows.map(\.key) == fresh.map(\.key) else {
            throw FuzzFailure(
                "\(live.query.text): the changes told add up to \(rows.map(identifier)), a fresh run "
                    + "\(fresh.map(identifier))")
        }
        let published = live.live.results.rows
        guard published.map(\.record) == fresh.map(\.record) else {
            throw FuzzFailure(
                "\(live.query.text): the live results \(published.map(identifier)), a fresh run "
                    + "\(fresh.map(identifier))")
        }
        live.rows = rows
    }

    private static func identifier(_ row: QueryRow) -> Int {
        guard case .map(let fields) = row.record, let field = fields.first(where: { $0.name == "id" }) else {
            return -1
        }
        switch field.value {
        case .int(let value): return Int(value)
        case .uint(let value): return Int(value)
        default: return -1
        }
    }
}
