import Foundation
import Rill

/// Waits for a store file to change: inotify on `data.mdb`, with a poll every second as a bound.
final class StoreFileWatcher {
    private let fd: Int32

    init(directory: String) {
        let fd = inotify_init1(Int32(IN_CLOEXEC))
        if fd >= 0, inotify_add_watch(fd, directory + "/data.mdb", UInt32(IN_MODIFY)) < 0 {
            close(fd)
            self.fd = -1
        } else {
            self.fd = fd
        }
    }

    deinit { if fd >= 0 { close(fd) } }

    /// Returns after the file changed, or after a second.
    func wait() {
        guard fd >= 0 else {
            usleep(100_000)
            return
        }
        var descriptor = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
        guard poll(&descriptor, 1, 1_000) > 0 else { return }
        var buffer = [UInt8](repeating: 0, count: 4096)
        _ = buffer.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
    }
}
