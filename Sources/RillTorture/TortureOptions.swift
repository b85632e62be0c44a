import Foundation

/// What a suite is asked to do: at which scale, with which seed, in which work directory.
package struct TortureOptions: Sendable {
    package var scale: TortureScale
    package var seed: UInt64
    /// Where the suite makes its stores and files; it removes what it made when it passes.
    package var workDirectory: URL
    /// The directory holding the built executables (`rill`, `rill-torture`, `libRillFaultShim.so`).
    package var productsDirectory: URL

    package init(scale: TortureScale, seed: UInt64, workDirectory: URL, productsDirectory: URL) {
        self.scale = scale
        self.seed = seed
        self.workDirectory = workDirectory
        self.productsDirectory = productsDirectory
    }

    /// The path of a built product.
    package func product(_ name: String) -> String { productsDirectory.appendingPathComponent(name).path }

    /// A new directory inside the work directory, named after `label`.
    package func directory(_ label: String) throws -> URL {
        let url = workDirectory.appendingPathComponent("\(label)-\(UUID().uuidString.prefix(8))")
        try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
        return url
    }
}
