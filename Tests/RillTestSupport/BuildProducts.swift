import Foundation

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
