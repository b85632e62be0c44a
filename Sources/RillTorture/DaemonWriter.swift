import Foundation
import Rill
import RillLocks
import RillWorkloads

#if canImport(Glibc)
    import Glibc
#endif

/// A writer that saves through `rill serve` (`POST /v1/save`), on a thread of the suite, and
/// keeps every save the daemon acknowledged with its `seq`.
///
/// It saves `TortureItem`s of its own writer number: mostly new ones, some replacing or deleting
/// one of its earlier items. When the daemon is gone (killed, not yet restarted) a save gets no
/// response and is not acknowledged; the writer connects again and goes on with a new save.
package final class DaemonWriter: Sendable {
    private let socket: String
    private let writer: Int
    private let seed: UInt64
    private let pause: Double
    private let state = Lock(State())
    private let done = DispatchSemaphore(value: 0)

    private struct State {
        var acknowledged: [AcknowledgedSave] = []
        var unanswered = 0
        var stopping = false
    }

    /// A writer of number `writer` saving through the daemon on `socket`, `pause` seconds apart.
    package init(socket: String, writer: Int, seed: UInt64, pause: Double = 0) {
        self.socket = socket
        self.writer = writer
        self.seed = seed
        self.pause = pause
    }

    /// The saves acknowledged so far.
    package var acknowledged: [AcknowledgedSave] { state.withLock { $0.acknowledged } }

    /// Saves sent that got no response (the daemon was killed or down).
    package var unanswered: Int { state.withLock { $0.unanswered } }

    package func start() {
        let thread = Thread { [self] in
            saveUntilStopped()
            done.signal()
        }
        thread.name = "rill-torture.daemon-writer"
        thread.start()
    }

    /// Stops the writer and waits for its last save.
    package func stop() {
        state.withLock { $0.stopping = true }
        done.wait()
    }

    private func saveUntilStopped() {
        let client = DaemonClient(socket: socket)
        var random = SeededGenerator(seed: seed)
        var live: [String] = []
        var number = 0
        while !state.withLock({ $0.stopping }) {
            let roll = Int.random(in: 0..<20, using: &random)
            let id: String
            let body: String
            var isDelete = false
            if roll == 0, !live.isEmpty {
                id = live.remove(at: Int.random(in: 0..<live.count, using: &random))
                body = #"{"changes":[{"op":"delete","entity":"TortureItem","id":"\#(id)"}]}"#
                isDelete = true
            } else {
                if roll < 4, !live.isEmpty {
                    id = live[Int.random(in: 0..<live.count, using: &random)]
                } else {
                    id = "d\(writer)-\(seed)-\(number)"
                    live.append(id)
                }
                let payload = String(repeating: "p", count: Int.random(in: 16...256, using: &random))
                body =
                    #"{"author":"daemon-writer","changes":[{"op":"insert","entity":"TortureItem","record":"#
                    + #"{"id":"\#(id)","writer":\#(writer),"number":\#(number),"payload":"\#(payload)"}}]}"#
                number += 1
            }
            guard let response = client.request("POST", "/v1/save", body: body) else {
                state.withLock { $0.unanswered += 1 }
                usleep(20_000)
                continue
            }
            if response.status == 200, let sequence = Self.sequence(of: response.body) {
                let key = AnyIdentifier.string(id).storageKey
                let save = AcknowledgedSave(
                    sequence: sequence, changes: [.init(entity: TortureItem.entityName, key: key, isDelete: isDelete)])
                state.withLock { $0.acknowledged.append(save) }
            } else if response.status >= 500 {
                state.withLock { $0.unanswered += 1 }
            }
            if pause > 0 { usleep(UInt32(pause * 1_000_000)) }
        }
    }

    /// The `seq` of a save's response, nil when it is `null` (the save changed nothing).
    private static func sequence(of body: String) -> UInt64? {
        guard let object = try? JSONSerialization.jsonObject(with: Data(body.utf8)) as? [String: Any] else {
            return nil
        }
        return (object["seq"] as? NSNumber)?.uint64Value
    }
}
