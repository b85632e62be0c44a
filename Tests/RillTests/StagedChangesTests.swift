import Foundation
import RillTestSupport
import Testing

@testable import Rill

@Suite struct StagedChangesTests {
    func key(_ id: Int) -> StagedChanges.Key { StagedChanges.Key(entity: "Counter", id: id.storageKey) }

    func summary(_ staged: StagedChanges) -> [String] {
        staged.entries.map { entry in
            switch entry.change {
            case .upsert(let model):
                "\(Int(entry.key.id.withUnsafeBytes { Int64(_storageKey: $0)! })):\((model as! Counter).value)"
            case .delete: "\(Int(entry.key.id.withUnsafeBytes { Int64(_storageKey: $0)! })):deleted"
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
}
