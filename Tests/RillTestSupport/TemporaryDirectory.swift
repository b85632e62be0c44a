import Foundation

/// A fresh directory under the system's temporary directory, removed when the value is released.
public final class TemporaryDirectory: @unchecked Sendable {
    // Immutable after init.
    public let url: URL

    public init(_ label: String = "rill-test") {
        url = URL(fileURLWithPath: NSTemporaryDirectory())
            .appendingPathComponent("\(label)-\(UUID().uuidString)")
        try! FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
    }

    /// The path of an entry inside the directory (not created).
    public func path(_ name: String) -> String { url.appendingPathComponent(name).path }

    deinit {
        try? FileManager.default.removeItem(at: url)
    }
}

/// Where the build products (the `rill` and `rill-test-helper` executables) are.
public var buildProductsDirectory: URL {
    let executable =
        (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe"))
        ?? CommandLine.arguments[0]
    var directory = URL(fileURLWithPath: executable).deletingLastPathComponent()
    // On Linux the test binary is `<products>/<Package>PackageTests.xctest`; be tolerant of bundles too.
    while !FileManager.default.fileExists(atPath: directory.appendingPathComponent("rill-test-helper").path),
        directory.path != "/"
    {
        directory.deleteLastPathComponent()
    }
    return directory
}

/// A random number generator with a printed, replayable seed (SplitMix64).
public struct SeededGenerator: RandomNumberGenerator, Sendable {
    public let seed: UInt64
    private var state: UInt64

    /// Uses `RILL_SEED` from the environment when set, so a failure can be replayed.
    public init(seed: UInt64? = nil, label: String = "") {
        let chosen =
            seed
            ?? ProcessInfo.processInfo.environment["RILL_SEED"].flatMap(UInt64.init)
            ?? UInt64.random(in: 1...UInt64.max)
        self.seed = chosen
        self.state = chosen
        if !label.isEmpty { print("[\(label)] seed \(chosen) (replay with RILL_SEED=\(chosen))") }
    }

    public mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}

/// The size of the oracle tests: small for every `make test`, larger on demand (`make oracle`)
/// through `RILL_ORACLE_RECORDS` and `RILL_ORACLE_QUERIES`.
public enum OracleScale {
    public static func records(default value: Int) -> Int {
        ProcessInfo.processInfo.environment["RILL_ORACLE_RECORDS"].flatMap(Int.init) ?? value
    }

    public static func queries(default value: Int) -> Int {
        ProcessInfo.processInfo.environment["RILL_ORACLE_QUERIES"].flatMap(Int.init) ?? value
    }

    /// The value of the environment variable `name` when it is a number, else `value`.
    public static func value(_ name: String, default value: Int) -> Int {
        ProcessInfo.processInfo.environment[name].flatMap(Int.init) ?? value
    }
}
