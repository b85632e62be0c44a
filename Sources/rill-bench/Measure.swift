import Foundation

/// Wall-clock seconds since an arbitrary point (monotonic).
func now() -> Double {
    var time = timespec()
    clock_gettime(CLOCK_MONOTONIC, &time)
    return Double(time.tv_sec) + Double(time.tv_nsec) / 1e9
}

/// Seconds taken by `body`.
func measure(_ body: () throws -> Void) rethrows -> Double {
    let start = now()
    try body()
    return now() - start
}
