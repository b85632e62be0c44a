import Foundation
import RillTestSupport
import RillWorkloads
import Testing

@testable import Rill

@Suite struct StagedChangesTests {
    func key(_ id: Int) -> StagedChanges.Key { StagedChanges.Key(entity: "Counter", id: id.storageKey) }

    func summary(_ staged: StagedChanges) -> [String] {
        staged.entries.map { entry in
            switch entry.change {
            case .upsert(let model):
                "\(Int(entry.key.id.withUnsafeBytes { Int64(storageKey: $0)! })):\((model as! Counter).value)"
            case .delete: "\(Int(entry.key.id.withUnsafeBytes { Int64(storageKey: $0)! })):deleted"
            }
        }
    }

    @Test func latestStagingWinsAtTheFirstPlaceBeforeAndAfterIndexing() {
        var staged = StagedChanges()
        staged.stage(.upsert(Counter(id: 1, value: 1)), for: key(1))
        staged.stage(.upsert(Counter(id: 2, value: 1)), for: key(2))
        staged.stage(.delete, for: key(1))
        staged.stage(.upsert(Counter(id: 3, value: 1)), for: key(3))
        staged.stage(.upsert(Counter(id: 1, value: 9)), for: key(1))
        staged.index()
        #expect(summary(staged) == ["1:9", "2:1", "3:1"])
        staged.stage(.delete, for: key(2))
        staged.stage(.upsert(Counter(id: 4, value: 1)), for: key(4))
        #expect(summary(staged) == ["1:9", "2:deleted", "3:1", "4:1"])
        if case .delete = staged.change(for: key(2)) {} else { Issue.record("key 2 should be deleted") }
        #expect(staged.change(for: key(5)) == nil)
    }

    @Test func removeSavedKeepsWhatWasStagedAgainDuringTheSave() {
        var staged = StagedChanges()
        for id in 0..<5 { staged.stage(.upsert(Counter(id: id, value: 0)), for: key(id)) }
        staged.index()
        let snapshot = staged
        staged.stage(.upsert(Counter(id: 2, value: 7)), for: key(2))
        staged.stage(.upsert(Counter(id: 9, value: 7)), for: key(9))
        staged.removeSaved(snapshot)
        #expect(summary(staged) == ["2:7", "9:7"])

        staged.index()
        let second = staged
        staged.removeSaved(second)
        #expect(staged.isEmpty)
    }

    @Test func largeBatchesWithRepeatsIndexAndGrowCorrectly() {
        var random = SeededGenerator(label: "staged changes")
        var staged = StagedChanges()
        var latest: [Int: Int] = [:]
        var order: [Int] = []
        for value in 0..<30_000 {
            let id = Int.random(in: 0..<25_000, using: &random)
            if latest[id] == nil { order.append(id) }
            latest[id] = value
            staged.stage(.upsert(Counter(id: id, value: value)), for: key(id))
        }
        staged.index()
        // Then more stagings on the built index, enough to grow its table several times.
        for value in 30_000..<80_000 {
            let id = Int.random(in: 0..<60_000, using: &random)
            if latest[id] == nil { order.append(id) }
            latest[id] = value
            staged.stage(.upsert(Counter(id: id, value: value)), for: key(id))
        }
        #expect(staged.entries.count == order.count)
        let stored = staged.entries.map { entry -> (Int, Int) in
            guard case .upsert(let model) = entry.change else { return (-1, -1) }
            let counter = model as! Counter
            return (counter.id, counter.value)
        }
        #expect(stored.map(\.0) == order)
        #expect(stored.allSatisfy { latest[$0.0] == $0.1 })
        for id in [0, 24_999, 59_999, 70_000] {
            let expected = latest[id]
            let found: Int? = {
                if case .upsert(let model) = staged.change(for: key(id)) { return (model as! Counter).value }
                return nil
            }()
            #expect(found == expected)
        }
    }
}
