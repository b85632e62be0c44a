import Foundation
import Rill
import RillTestSupport
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// A daemon told to stop the moment it can be seen: a SIGTERM sent as soon as its socket file
/// exists stops it cleanly (exit 0), never lost and never fatal.
@Suite struct ServeShutdownSignalTests {
    let directory = TemporaryDirectory()

    @Test func aSignalSentAsSoonAsTheSocketExistsStopsTheDaemon() throws {
        let path = directory.path("store")
        let container = try ModelContainer(
            for: Counter.self, configurations: ModelConfiguration(url: URL(fileURLWithPath: path)))
        let context = ModelContext(container)
        context.insert(Counter(id: 1, value: 1, payload: "p"))
        try context.save()
        let socket = path + "/rill.sock"
        for attempt in 0..<12 {
            let process = Process()
            process.executableURL = buildProductsDirectory.appendingPathComponent("rill")
            process.arguments = ["serve", path]
            process.standardOutput = FileHandle.nullDevice
            process.standardError = FileHandle.nullDevice
            try process.run()
            var deadline = Date().addingTimeInterval(20)
            while !FileManager.default.fileExists(atPath: socket), process.isRunning, Date() < deadline {
                usleep(200)
            }
            // Each attempt signals a little later after the socket appeared, to cross the start-up.
            usleep(UInt32(attempt * 300))
            kill(process.processIdentifier, attempt.isMultiple(of: 2) ? SIGTERM : SIGINT)
            deadline = Date().addingTimeInterval(20)
            while process.isRunning, Date() < deadline { usleep(1_000) }
            let stopped = !process.isRunning
            if !stopped {
                kill(process.processIdentifier, SIGKILL)
            }
            process.waitUntilExit()
            #expect(stopped, "attempt \(attempt): the signal was lost and the daemon served on")
            #expect(
                process.terminationReason == .exit && process.terminationStatus == 0,
                "attempt \(attempt): ended by \(process.terminationReason == .exit ? "exit" : "signal") \(process.terminationStatus)"
            )
            #expect(!FileManager.default.fileExists(atPath: socket), "attempt \(attempt): the socket was left behind")
        }
    }
}
