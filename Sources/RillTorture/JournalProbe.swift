import Foundation

#if canImport(Glibc)
    import Glibc
#endif

/// A process that writes and flushes a file as a script says, for the tests of the fault shim's
/// journal: `rill-torture worker journal-probe <file> <step>…`, each step one of
///
/// - `w<offset>+<length>=<byte>`: pwrite `length` copies of `byte` (a decimal number) at `offset`;
/// - `v<offset>+<length>=<byte>,<length>=<byte>…`: seek to `offset`, then one writev of those parts;
/// - `d<offset>+<length>=<byte>`: the same as `w`, through a second descriptor opened with O_DSYNC;
/// - `s`: fdatasync the first descriptor.
package enum JournalProbe {
    package static func run(_ arguments: [String]) throws {
        guard let path = arguments.first else { throw TortureUsage("usage: journal-probe <file> <step>…") }
        let plain = open(path, O_RDWR | O_CREAT, 0o600)
        let synchronous = open(path, O_RDWR | O_DSYNC)
        guard plain >= 0, synchronous >= 0 else { throw TortureUsage("cannot open \(path)") }
        for step in arguments.dropFirst() {
            guard let kind = step.first else { continue }
            if kind == "s" {
                guard fdatasync(plain) == 0 else { throw TortureUsage("fdatasync failed") }
                continue
            }
            let body = step.dropFirst()
            guard let plus = body.firstIndex(of: "+"), let offset = Int(body[..<plus]) else {
                throw TortureUsage("bad step \(step)")
            }
            let parts = try body[body.index(after: plus)...].split(separator: ",").map { part -> [UInt8] in
                let fields = part.split(separator: "=")
                guard fields.count == 2, let length = Int(fields[0]), let byte = UInt8(fields[1]) else {
                    throw TortureUsage("bad step \(step)")
                }
                return [UInt8](repeating: byte, count: length)
            }
            let written: Int
            switch kind {
            case "v":
                lseek(plain, off_t(offset), SEEK_SET)
                let buffers = parts.map { UnsafeMutableRawBufferPointer.allocate(byteCount: $0.count, alignment: 8) }
                defer { buffers.forEach { $0.deallocate() } }
                for (buffer, part) in zip(buffers, parts) { buffer.copyBytes(from: part) }
                let vectors = buffers.map { iovec(iov_base: $0.baseAddress, iov_len: $0.count) }
                written = vectors.withUnsafeBufferPointer { writev(plain, $0.baseAddress, Int32($0.count)) }
            case "w", "d":
                written = parts[0].withUnsafeBytes {
                    pwrite(kind == "d" ? synchronous : plain, $0.baseAddress, $0.count, off_t(offset))
                }
            default:
                throw TortureUsage("bad step \(step)")
            }
            guard written == parts.reduce(0, { $0 + $1.count }) else { throw TortureUsage("short write at \(step)") }
        }
        close(synchronous)
        close(plain)
    }
}
