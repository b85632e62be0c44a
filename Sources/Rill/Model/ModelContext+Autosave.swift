import Foundation
import RillLocks

extension ModelContext {
    /// Whether the context saves its staged changes on its own, shortly after they are staged,
    /// as SwiftData's contexts may. Off by default, for every context, the main one included.
    ///
    /// When on, a change staged by ``insert(_:)``, ``delete(_:)`` or
    /// ``delete(model:where:includeSubclasses:)`` is saved about a second later, with every
    /// change staged by then, in one atomic commit, as ``save()`` saves them; a burst of changes
    /// is one save. Turning it on with changes staged schedules their save; turning it off stops
    /// the saves not yet made. A ``transaction(block:)`` is never saved in part: an autosave that
    /// comes while a block runs leaves the block's changes to the block's own save.
    ///
    /// An autosave that fails leaves the changes staged, as a failed `save()` does
    /// (``hasChanges`` stays true), and reports nothing; the next change staged schedules another
    /// attempt, and ``save()`` throws the error. A process that is about to end calls `save()`:
    /// an autosave scheduled then does not run.
    ///
    /// SwiftData turns autosave on for a main context, whose saves follow an app's UI events. A
    /// process on Linux has no such events, and a save that comes on its own is a save the
    /// program did not ask for: here it is for the program to turn on.
    public var autosaveEnabled: Bool {
        get { core.state.withLock { $0.autosaves } }
        set {
            let schedules = core.state.withLock { state in
                state.autosaves = newValue
                return state.schedulesAutosave()
            }
            if schedules { scheduleAutosave() }
        }
    }

    /// Accepted for code written for SwiftData, where it processes the changes made to model
    /// objects (for undo and notifications). A Rill model is a value: a change exists only once
    /// it is staged, so there is nothing left to process, and this does nothing.
    public func processPendingChanges() {}

    /// How long after the change that schedules it an autosave runs.
    static let autosaveDelay = DispatchTimeInterval.seconds(1)

    /// Where autosaves run.
    private static let autosaveQueue = DispatchQueue(label: "rill.context.autosave", qos: .utility)

    /// Saves the staged changes after `autosaveDelay`, if autosave is still on then.
    func scheduleAutosave() {
        Self.autosaveQueue.asyncAfter(deadline: .now() + Self.autosaveDelay) { [self] in
            // First, so that a change staged while this saves schedules the next autosave.
            core.state.withLock { $0.autosaveScheduled = false }
            // A failure leaves the changes staged, for `save()` to report.
            _ = try? save(autosaving: true)
        }
    }
}
