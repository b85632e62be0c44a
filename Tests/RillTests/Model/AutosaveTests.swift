import Foundation
import RillTestSupport
import RillWorkloads
import Testing

@testable import Rill

/// `autosaveEnabled`: off by default; on, staged changes are saved about a second later in one
/// commit; a transaction block is never saved in part; a failed autosave leaves the changes staged.
@Suite struct AutosaveTests {
    let directory = TemporaryDirectory()

    struct Note: PersistentModel, Equatable {
        var id: Int
        var text: String
    }

    func container(_ name: String = "store", allowsSave: Bool = true) throws -> ModelContainer {
        var configuration = ModelConfiguration(url: directory.url.appendingPathComponent(name))
        configuration.allowsSave = allowsSave
        return try ModelContainer(for: Note.self, configurations: configuration)
    }

    /// Waits up to 10 seconds for `condition`; whether it held.
    func eventually(_ condition: () throws -> Bool) async throws -> Bool {
        let deadline = Date().addingTimeInterval(10)
        while Date() < deadline {
            if try condition() { return true }
            try await Task.sleep(for: .milliseconds(20))
        }
        return try condition()
    }

    /// Twice the delay of an autosave.
    func waitPastAnAutosave() async throws {
        try await Task.sleep(for: .seconds(2 * Self.delaySeconds))
    }

    static var delaySeconds: Double {
        guard case .seconds(let seconds) = ModelContext.autosaveDelay else { return 1 }
        return Double(seconds)
    }

    @Test func offByDefault() async throws {
        let container = try container()
        #expect(!container.mainContext.autosaveEnabled)
        let context = ModelContext(container)
        #expect(!context.autosaveEnabled)
        context.insert(Note(id: 1, text: "kept staged"))
        try await waitPastAnAutosave()
        #expect(context.hasChanges)
        #expect(try ModelContext(container).fetchCount(FetchDescriptor<Note>()) == 0)
        context.processPendingChanges()
        #expect(context.hasChanges)
    }

    @Test func aBurstOfChangesIsOneSave() async throws {
        let container = try container()
        let context = container.mainContext
        context.autosaveEnabled = true
        #expect(container.mainContext.autosaveEnabled)
        let before = try container.lastSequence()
        for id in 0..<100 { context.insert(Note(id: id, text: "note \(id)")) }
        context.delete(Note(id: 7, text: ""))
        let reader = ModelContext(container)
        #expect(try await eventually { try reader.fetchCount(FetchDescriptor<Note>()) == 99 })
        #expect(try await eventually { !context.hasChanges })
        #expect(try container.lastSequence() == before + 1)
        // Later changes are saved too.
        context.insert(Note(id: 500, text: "later"))
        #expect(try await eventually { try reader.model(Note.self, id: 500) != nil })
        #expect(try container.lastSequence() == before + 2)
    }

    @Test func turningItOnSavesWhatIsStagedAndOffStopsIt() async throws {
        let container = try container()
        let context = ModelContext(container)
        let reader = ModelContext(container)
        context.insert(Note(id: 1, text: "staged first"))
        context.autosaveEnabled = true
        #expect(try await eventually { try reader.model(Note.self, id: 1) != nil })

        context.insert(Note(id: 2, text: "not saved"))
        context.autosaveEnabled = false
        try await waitPastAnAutosave()
        #expect(try reader.model(Note.self, id: 2) == nil)
        #expect(context.hasChanges)
    }

    @Test func aTransactionIsNeverSavedInPart() async throws {
        let container = try container()
        let context = ModelContext(container)
        let reader = ModelContext(container)
        context.autosaveEnabled = true
        let before = try container.lastSequence()
        var seenInTheBlock: Int?
        try context.transaction {
            context.insert(Note(id: 1, text: "first of the block"))
            // An autosave comes while the block runs.
            usleep(UInt32(2 * 1_000_000 * Self.delaySeconds))
            seenInTheBlock = try reader.fetchCount(FetchDescriptor<Note>())
            context.insert(Note(id: 2, text: "second of the block"))
        }
        #expect(seenInTheBlock == 0)
        #expect(try reader.fetchCount(FetchDescriptor<Note>()) == 2)
        #expect(try container.lastSequence() == before + 1)

        // A block that throws: its changes are discarded, those staged before it are autosaved.
        context.insert(Note(id: 3, text: "before the block"))
        struct Refusal: Error {}
        #expect(throws: Refusal.self) {
            try context.transaction {
                context.insert(Note(id: 4, text: "discarded"))
                throw Refusal()
            }
        }
        #expect(try await eventually { try reader.model(Note.self, id: 3) != nil })
        try await waitPastAnAutosave()
        #expect(try reader.model(Note.self, id: 4) == nil)
        #expect(!context.hasChanges)
    }

    /// Threads staging changes, some of them saving too, while autosaves come: every change is
    /// saved once, the last value of each model is the one stored.
    @Test func changesFromManyThreadsAreAllSaved() async throws {
        let container = try container()
        let context = ModelContext(container)
        context.autosaveEnabled = true
        let seed = SeededGenerator(label: "autosave threads").seed
        DispatchQueue.concurrentPerform(iterations: 4) { thread in
            var random = SeededGenerator(seed: seed &+ UInt64(thread))
            for round in 0..<300 {
                let id = thread * 1_000 + Int.random(in: 0..<100, using: &random)
                if Int.random(in: 0..<10, using: &random) == 0 {
                    context.delete(Note(id: id, text: ""))
                } else {
                    context.insert(Note(id: id, text: "thread \(thread) round \(round)"))
                }
                if Int.random(in: 0..<50, using: &random) == 0 { _ = try? context.save() }
                if Int.random(in: 0..<20, using: &random) == 0 { usleep(5_000) }
            }
        }
        // What each thread staged last for each id, in the order it staged it.
        var expected: [Int: String?] = [:]
        for thread in 0..<4 {
            var random = SeededGenerator(seed: seed &+ UInt64(thread))
            for round in 0..<300 {
                let id = thread * 1_000 + Int.random(in: 0..<100, using: &random)
                expected[id] =
                    Int.random(in: 0..<10, using: &random) == 0 ? String?.none : "thread \(thread) round \(round)"
                _ = Int.random(in: 0..<50, using: &random)
                _ = Int.random(in: 0..<20, using: &random)
            }
        }
        #expect(try await eventually { !context.hasChanges })
        let stored = try ModelContext(container).fetch(FetchDescriptor<Note>())
        let found = Dictionary(uniqueKeysWithValues: stored.map { ($0.id, $0.text) })
        for (id, text) in expected {
            #expect(found[id] == text, "id \(id), seed \(seed)")
        }
        #expect(found.count == expected.values.filter { $0 != nil }.count)
    }

    @Test func aFailedAutosaveLeavesTheChangesStaged() async throws {
        _ = try container("read-only")
        let container = try container("read-only", allowsSave: false)
        let context = ModelContext(container)
        context.autosaveEnabled = true
        context.insert(Note(id: 1, text: "refused"))
        try await waitPastAnAutosave()
        #expect(context.hasChanges)
        #expect(throws: RillError.self) { try context.save() }
    }
}
