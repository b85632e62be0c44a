import Foundation

/// A small file system mounted for the `disk-full` suite: a loop-mounted ext4 image, or a
/// size-limited tmpfs where loop devices are not available. Needs root (or `CAP_SYS_ADMIN`).
package final class SmallFileSystem {
    /// Where it is mounted.
    package let directory: URL
    /// `ext4 (loop)` or `tmpfs`.
    package let kind: String
    private var mounted = true

    private init(directory: URL, kind: String) {
        self.directory = directory
        self.kind = kind
    }

    deinit { unmount() }

    /// Mounts a file system of `bytes` at `directory` (created), its image (for ext4) at
    /// `image`; throws the reason each way failed when none could be mounted. The environment
    /// variable `RILL_TORTURE_FS=tmpfs` skips ext4, to run on tmpfs where both would mount.
    package static func mount(at directory: URL, bytes: Int, image: URL) throws -> SmallFileSystem {
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        var reasons: [String] = []
        if ProcessInfo.processInfo.environment["RILL_TORTURE_FS"] == "tmpfs" {
            reasons.append("ext4 not tried (RILL_TORTURE_FS=tmpfs)")
        } else if let mkfs = ["/usr/sbin/mkfs.ext4", "/sbin/mkfs.ext4"].first(
            where: FileManager.default.isExecutableFile)
        {
            _ = FileManager.default.createFile(atPath: image.path, contents: nil)
            let handle = try FileHandle(forWritingTo: image)
            try handle.truncate(atOffset: UInt64(bytes))
            try handle.close()
            // No blocks reserved for root: the suite runs as root and must see the disk fill.
            let made = try command(mkfs, ["-q", "-F", "-m", "0", image.path])
            if made.status == 0 {
                let loop = try command("/bin/mount", ["-o", "loop", image.path, directory.path])
                if loop.status == 0 { return SmallFileSystem(directory: directory, kind: "ext4 (loop)") }
                reasons.append(
                    "mount -o loop: \(loop.standardError.split(whereSeparator: \.isNewline).joined(separator: " "))")
            } else {
                reasons.append(
                    "mkfs.ext4: \(made.standardError.split(whereSeparator: \.isNewline).joined(separator: " "))")
            }
            try? FileManager.default.removeItem(at: image)
        } else {
            reasons.append("mkfs.ext4 is not installed (Debian: e2fsprogs)")
        }
        let tmpfs = try command("/bin/mount", ["-t", "tmpfs", "-o", "size=\(bytes)", "tmpfs", directory.path])
        if tmpfs.status == 0 { return SmallFileSystem(directory: directory, kind: "tmpfs") }
        reasons.append(
            "mount -t tmpfs: \(tmpfs.standardError.split(whereSeparator: \.isNewline).joined(separator: " "))")
        throw TortureUsage("no small file system can be mounted here: " + reasons.joined(separator: "; "))
    }

    /// Unmounts it; once. A store's threads may hold its files for a moment after its last use
    /// is released: the unmount is tried again for a while, then done lazily (the file system goes
    /// once its last file is closed), so that no mount outlives the suite.
    package func unmount() {
        guard mounted else { return }
        mounted = false
        for _ in 0..<50 {
            if (try? Self.command("/bin/umount", [directory.path]))?.status == 0 { return }
            usleep(100_000)
        }
        _ = try? Self.command("/bin/umount", ["-l", directory.path])
    }

    private static func command(_ path: String, _ arguments: [String]) throws -> WorkerRun {
        guard FileManager.default.isExecutableFile(atPath: path) else {
            return WorkerRun(status: 127, standardOutput: "", standardError: "\(path) is missing")
        }
        return try WorkerRun.run(path, arguments, in: URL(fileURLWithPath: NSTemporaryDirectory()))
    }
}
