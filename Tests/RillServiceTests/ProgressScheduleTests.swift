import RillWorkloads
import Testing

@testable import RillService

/// The rules of progress reports (Protocol.md, "Progress"), on a model of a subscription: a log
/// that grows, a live query that queues the changes of some commits and the progress reports
/// asked of it (after the changes before them), a connection that takes its queue now and then
/// and looks for progress when its wait times out — random steps, against a brute-force account
/// of what was sent and when.
@Suite struct ProgressScheduleTests {
    enum Item: Equatable {
        case change(UInt64)
        case progress(UInt64)
    }

    @Test func idsOnlyGrowAndProgressNamesOnlyResultsSent() {
        var random = SeededGenerator(label: "progress schedule")
        for run in 0..<300 {
            let interval: Double? = run % 10 == 0 ? nil : Double(Int.random(in: 1...50, using: &random)) / 1_000
            let step = UInt64((interval ?? 0.01) * 1e9)
            var now = UInt64.random(in: 0...1_000_000, using: &random)
            var head = UInt64.random(in: 0...5, using: &random)
            var schedule = ProgressSchedule(interval: interval, sequence: head, now: now)
            var queue: [Item] = []
            var changed: [UInt64] = []
            // The account: the ids sent in order, and when the interval last started.
            var sent: [UInt64] = [head]
            var started = now
            var progressSent = 0

            func take() {
                for item in queue {
                    switch item {
                    case .change(let sequence):
                        let taken = schedule.send(sequence, at: now)
                        #expect(taken, "run \(run): a change is always sent")
                        sent.append(sequence)
                        started = now
                    case .progress(let sequence):
                        let expected = sequence > sent.last!
                        let taken = schedule.send(sequence, at: now)
                        #expect(taken == expected, "run \(run): progress \(sequence)")
                        guard expected else { continue }
                        // Every change up to it was sent before it.
                        #expect(changed.filter { $0 <= sequence }.allSatisfy(sent.contains), "run \(run)")
                        sent.append(sequence)
                        started = now
                        progressSent += 1
                    }
                }
                queue = []
            }
            func look() {
                let due = interval.map { now >= started + UInt64($0 * 1e9) } ?? false
                #expect(schedule.deadline == interval.map { started + UInt64($0 * 1e9) }, "run \(run): the deadline")
                let asked = schedule.shouldAsk(published: head, now: now)
                #expect(asked == (due && head > sent.last!), "run \(run): asked at \(now), head \(head)")
                if due { started = now }
                // The live query reports once it has queued the changes up to the head.
                if asked { queue.append(.progress(head)) }
            }

            for _ in 0..<200 {
                switch Int.random(in: 0..<4, using: &random) {
                case 0:
                    head += 1
                    if Int.random(in: 0..<4, using: &random) == 0 {
                        queue.append(.change(head))
                        changed.append(head)
                    }
                case 1: now += UInt64.random(in: 0...step + step / 2, using: &random)
                case 2: take()
                default: look()
                }
            }
            #expect(sent == sent.sorted() && Set(sent).count == sent.count, "run \(run): ids only grow")
            #expect(schedule.sequence == sent.last!)
            // A quiet stretch at the end: one interval later, the subscriber is told of the head.
            take()
            now += step
            look()
            take()
            #expect(sent.last! == (interval == nil ? changed.last ?? sent.last! : head), "run \(run): reached the head")
            if interval == nil { #expect(progressSent == 0, "run \(run): never without an interval") }
        }
    }

    @Test func resultsAndResetsRestartTheIntervalAndNeverGoBack() {
        var schedule = ProgressSchedule(interval: 1, sequence: 0, now: 0)
        schedule.restart(at: 10, now: 5)
        #expect(schedule.sequence == 10)
        #expect(schedule.deadline == 1_000_000_005)
        schedule.restart(at: 8, now: 6)
        #expect(schedule.sequence == 10)
        let early = schedule.shouldAsk(published: 20, now: 1_000_000_005)
        let due = schedule.shouldAsk(published: 20, now: 1_000_000_006)
        let again = schedule.send(10, at: 0)
        #expect(!early && due && !again)
        #expect(ProgressSchedule(interval: 0, sequence: 0, now: 0).deadline == nil)
    }
}
