import Foundation

@testable import RillStorage

/// A suite whose tests each open an environment in a directory of their own.
protocol StorageTestSuite {
    var directory: URL { get }
}

extension StorageTestSuite {
    func open(mapSize: Int = 1 << 20) throws -> Environment {
        try Environment(directory: directory.path, options: EnvironmentOptions(initialMapSize: mapSize))
    }

    /// A 4-byte key that sorts as `index` does.
    static func key(_ index: Int) -> [UInt8] { withUnsafeBytes(of: UInt32(index).bigEndian) { Array($0) } }
}
