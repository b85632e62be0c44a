import Foundation
import RillTestSupport
import RillWorkloads
import Testing

@testable import Rill
@testable import RillCommandLine

/// The fields `rill watch` names after a changed row, against the log's own account of each
/// update (computed by the store from the bytes of the two versions, in the save transaction).
@Suite struct TerminalRenderingTests {
    let directory = TemporaryDirectory()

    @Test func changedFieldsAreTheOnesTheLogNames() throws {
        var random = SeededGenerator(label: "changed fields")
        let container = try ModelContainer(
            for: Gadget.self, configurations: ModelConfiguration(url: directory.url.appendingPathComponent("store")))
        let context = ModelContext(container)
        var stored: [Int: Gadget] = [:]
        for _ in 0..<300 {
            let id = Int.random(in: 0..<20, using: &random)
            var gadget = Gadget.random(id: id, using: &random)
            if var old = stored[id], Bool.random(using: &random) {
                // One or two fields only, a missing maker among them now and then.
                switch Int.random(in: 0..<4, using: &random) {
                case 0: old.maker = Bool.random(using: &random) ? nil : gadget.maker
                case 1: old.stock = gadget.stock
                case 2: old.spec.weight = gadget.spec.weight
                default:
                    old.tags = gadget.tags
                    old.price = gadget.price
                }
                gadget = old
            }
            context.insert(gadget)
            stored[id] = gadget
            try context.save()
        }

        var records: [[UInt8]: RecordValue] = [:]
        var updates = 0
        for entry in try container.store.entries(after: 0) {
            for change in entry.changes {
                let record = try change.record.map { bytes in
                    try bytes.withUnsafeBytes { try RecordValue(record: $0) }
                }
                if change.kind == .update, let old = records[change.key], let record {
                    updates += 1
                    #expect(
                        TerminalRendering.changedFields(from: old, to: record) == change.changedFields,
                        "commit \(entry.sequence): \(old.jsonString()) → \(record.jsonString())")
                }
                records[change.key] = record
            }
        }
        #expect(updates > 50)
    }
}
