/// Reports the records one index build has processed to the store's progress handler, when it has one.
struct BuildProgress {
    let phase: StoreProgress.Phase
    let handler: (@Sendable (StoreProgress) -> Void)?

    func report(_ completed: Int, of total: Int) {
        handler?(StoreProgress(phase: phase, completed: completed, total: total))
    }
}
