// rill-fuzz: the fuzzing targets of Sources/RillFuzzTargets (see Documentation/Reliability.md).
//
//   rill-fuzz <target> [libFuzzer options] [corpus directories]   (built with -sanitize=fuzzer: fuzzes)
//   rill-fuzz <target> <file or directory>…                       (any other build: replays the inputs)
//   rill-fuzz list
//
// Built with `-sanitize=fuzzer`, the binary holds libFuzzer, and this main hands it the target
// through `LLVMFuzzerRunDriver`, found at run time so that the ordinary build links without
// libFuzzer. A failed oracle aborts, as a crash does, so that libFuzzer saves the input.
import Foundation
import RillFuzzTargets

#if canImport(Glibc)
    import Glibc
#endif

/// The target chosen on the command line, read by libFuzzer's callback, which cannot capture it.
enum Selected {
    nonisolated(unsafe) static var target: FuzzTargets.Target?
}

/// Runs the chosen target on one input; aborts when an oracle fails.
func runSelected(_ data: UnsafePointer<UInt8>?, _ size: Int) -> Int32 {
    guard let target = Selected.target else { return 0 }
    let bytes = data.map { Array(UnsafeBufferPointer(start: $0, count: size)) } ?? []
    do {
        try target.run(bytes)
    } catch {
        FileHandle.standardError.write(Data("rill-fuzz: \(target.name): \(error)\n".utf8))
        abort()
    }
    return 0
}

/// libFuzzer's own main calls this; it is defined so that a build with `-sanitize=fuzzer` links.
@_cdecl("LLVMFuzzerTestOneInput")
func fuzzerTestOneInput(_ data: UnsafePointer<UInt8>?, _ size: Int) -> Int32 { runSelected(data, size) }

/// libFuzzer's driver and its arguments, handed to the thread it runs on; the process exits with
/// the driver's status.
final class DriverStart: @unchecked Sendable {
    let driver: FuzzerDriver
    var argc: Int32
    var argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>

    init(driver: FuzzerDriver, argc: Int32, argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>) {
        self.driver = driver
        self.argc = argc
        self.argv = argv
    }

    func run() -> Never {
        exit(driver(&argc, &argv) { data, size in runSelected(data, size) })
    }
}

typealias FuzzerCallback = @convention(c) (UnsafePointer<UInt8>?, Int) -> Int32
typealias FuzzerDriver =
    @convention(c) (
        UnsafeMutablePointer<Int32>, UnsafeMutablePointer<UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>>,
        FuzzerCallback
    ) -> Int32

let arguments = Array(CommandLine.arguments.dropFirst())
if arguments.first == "list" {
    print(FuzzTargets.all.map(\.name).joined(separator: "\n"))
    exit(0)
}
// libFuzzer starts copies of this process for some tasks (`-merge=1`) with the arguments it was
// given, without the target's name: they find it in the environment.
let named = arguments.first.flatMap(FuzzTargets.named)
guard let target = named ?? ProcessInfo.processInfo.environment["RILL_FUZZ_TARGET"].flatMap(FuzzTargets.named) else {
    let names = FuzzTargets.all.map(\.name).joined(separator: ", ")
    FileHandle.standardError.write(
        Data("usage: rill-fuzz <target> [libFuzzer options] [corpus or files…]\ntargets: \(names)\n".utf8))
    exit(2)
}
Selected.target = target

if let symbol = dlsym(dlopen(nil, RTLD_NOW), "LLVMFuzzerRunDriver") {
    setenv("RILL_FUZZ_TARGET", target.name, 1)
    // libFuzzer reads its options and corpus directories from argv: the target's name goes.
    var argc = CommandLine.argc
    var argv = CommandLine.unsafeArgv
    if named != nil {
        argv[1] = argv[0]
        argc -= 1
        argv += 1
    }
    let driver = unsafeBitCast(symbol, to: FuzzerDriver.self)
    // Inputs nest records as deep as the format allows (512 levels), and this build's frames (no
    // optimization, the address sanitizer's redzones) are many times a release build's: deeper
    // than a main thread's 8 MiB holds. libFuzzer runs on a thread with room for them; the
    // readers' own need, a 1 MiB stack for the deepest record, is the tests' (`RecordDepthTests`).
    let start = DriverStart(driver: driver, argc: argc, argv: argv)
    let thread = Thread { start.run() }
    thread.stackSize = 1 << 30
    thread.start()
    while true { pause() }
}

// Without libFuzzer: replay every file named, and every file in every directory named.
var files: [URL] = []
for path in arguments.dropFirst(named == nil ? 0 : 1) where !path.hasPrefix("-") {
    let url = URL(fileURLWithPath: path)
    var isDirectory: ObjCBool = false
    guard FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory) else { continue }
    if isDirectory.boolValue {
        let names = (try? FileManager.default.contentsOfDirectory(atPath: path)) ?? []
        files += names.sorted().filter { !$0.hasPrefix(".") }.map { url.appendingPathComponent($0) }
    } else {
        files.append(url)
    }
}
var failures = 0
for file in files {
    do {
        try target.run(Array(try Data(contentsOf: file)))
    } catch {
        failures += 1
        print("\(file.path): \(error)")
    }
}
print("\(target.name): \(files.count) inputs replayed, \(failures) failed")
exit(failures == 0 ? 0 : 1)
