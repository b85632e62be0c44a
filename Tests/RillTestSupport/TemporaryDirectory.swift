import Foundation
import Rill

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

    /// The path of a new store in this directory holding `records` `Counter`s (ids and values
    /// 0, 1, …, each with a payload of `payload` bytes), saved in one commit.
    public func counterStore(_ name: String = "store", records: Int = 10, payload: Int = 0) throws -> String {
        let path = self.path(name)
        let container = try ModelContainer(
            for: Counter.self, configurations: ModelConfiguration(url: URL(fileURLWithPath: path)))
        let context = ModelContext(container)
        for id in 0..<records {
            context.insert(Counter(id: id, value: id, payload: String(repeating: "p", count: payload)))
        }
        try context.save()
        return path
    }
}
