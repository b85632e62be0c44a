import Foundation

/// A progress bar on standard error, only on a terminal and only after a second.
struct Progress {
    let verb: String
    let total: Int
    private var done = 0
    private let started = Date()
    private var lastDrawn = Date.distantPast
    private var drawn = false

    init(verb: String, total: Int) {
        self.verb = verb
        self.total = total
    }

    mutating func advance(by count: Int = 1) {
        done += count
        guard done & 1023 == 0, Terminal.isStandardErrorATerminal else { return }
        let now = Date()
        guard now.timeIntervalSince(started) > 1, now.timeIntervalSince(lastDrawn) > 0.1 else { return }
        lastDrawn = now
        draw()
    }

    mutating func finish() {
        guard drawn else { return }
        draw()
        FileHandle.standardError.write(Data("\n".utf8))
    }

    private mutating func draw() {
        drawn = true
        let fraction = total > 0 ? min(Double(done) / Double(total), 1) : 1
        let width = 30
        let filled = Int(fraction * Double(width))
        let bar = String(repeating: "█", count: filled) + String(repeating: "░", count: width - filled)
        let text = "\r\(bar) \(Int(fraction * 100))%  \(done)/\(total) \(verb)"
        FileHandle.standardError.write(Data(text.utf8))
    }
}
