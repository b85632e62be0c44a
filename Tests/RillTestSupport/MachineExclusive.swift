/// Tests that judge the machine against itself within one run (a latency under abuse against
/// its own baseline) and tests that load it heavily for a while (a browser): run one at a time,
/// so that a burst of one cannot skew the other's ratio. Other tests run beside them as usual.
public enum MachineExclusive {
    private static let gate = Gate()

    /// Runs `body` once no other body given here runs.
    public static func run<R>(_ body: () throws -> R) async throws -> R {
        await gate.acquire()
        do {
            let result = try body()
            await gate.release()
            return result
        } catch {
            await gate.release()
            throw error
        }
    }

    private actor Gate {
        private var busy = false
        private var waiters: [CheckedContinuation<Void, Never>] = []

        func acquire() async {
            guard busy else {
                busy = true
                return
            }
            await withCheckedContinuation { waiters.append($0) }
        }

        func release() {
            if waiters.isEmpty { busy = false } else { waiters.removeFirst().resume() }
        }
    }
}
