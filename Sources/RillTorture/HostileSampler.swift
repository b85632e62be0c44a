import Foundation
import RillLocks

/// Samples the daemon of the `hostile` suite every 50 ms, on a thread of its own, until stopped:
/// the peaks of its resident memory, open descriptors and threads.
final class HostileSampler: @unchecked Sendable {
    // Sendable: the peaks are behind their lock; the daemon is only read through `/proc`.
    private let daemon: HostileDaemon
    private let peaks = Lock((resident: 0, descriptors: 0, threads: 0, stopping: false))
    private let finished = DispatchSemaphore(value: 0)

    init(_ daemon: HostileDaemon) {
        self.daemon = daemon
        Thread { [self] in
            defer { finished.signal() }
            while true {
                let (resident, descriptors, threads) = (daemon.residentBytes, daemon.openDescriptors, daemon.threads)
                let stopping = peaks.withLock { peaks in
                    peaks.resident = max(peaks.resident, resident)
                    peaks.descriptors = max(peaks.descriptors, descriptors)
                    peaks.threads = max(peaks.threads, threads)
                    return peaks.stopping
                }
                if stopping { return }
                usleep(50_000)
            }
        }.start()
    }

    var peakResident: Int { peaks.withLock { $0.resident } }
    var peakDescriptors: Int { peaks.withLock { $0.descriptors } }
    var peakThreads: Int { peaks.withLock { $0.threads } }

    func stop() {
        peaks.withLock { $0.stopping = true }
        finished.wait()
    }
}
