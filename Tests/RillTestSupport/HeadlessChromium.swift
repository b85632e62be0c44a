import Foundation

#if canImport(Glibc)
    import Glibc
#endif

/// A headless Chromium driven over the DevTools protocol on a pipe (`--remote-debugging-pipe`, here a
/// socket pair):
/// commands go to its descriptor 3 and answers come from its descriptor 4, each a JSON object
/// ended by a NUL byte. No WebSocket is needed.
///
/// The browser runs in a process group of its own, with a profile in a directory of the test's,
/// and is closed (then killed, with every process of its group) when the value goes.
package final class HeadlessChromium {
    /// Why Chromium cannot run here: a test that needs it skips, saying so.
    package struct Unavailable: Error, CustomStringConvertible {
        package var description: String
    }

    /// A command the browser refused, an exception in a page, or no answer in time.
    package struct Failure: Error, CustomStringConvertible {
        package var description: String
    }

    package let pid: pid_t
    private let commands: Int32
    private let answers: Int32
    private var buffer: [UInt8] = []
    private var nextID = 0
    /// Messages of the browser that answered no command (events), in order, as they came.
    package private(set) var events: [[String: Any]] = []

    /// The browser's executable: `RILL_CHROMIUM`, else `chromium`, `chromium-browser` or
    /// `google-chrome` on the `PATH`; nil when there is none.
    package static func executable() -> String? {
        if let path = ProcessInfo.processInfo.environment["RILL_CHROMIUM"], !path.isEmpty { return path }
        let directories = (ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin:/bin").split(separator: ":")
        for name in ["chromium", "chromium-browser", "google-chrome"] {
            for directory in directories where access("\(directory)/\(name)", X_OK) == 0 {
                return "\(directory)/\(name)"
            }
        }
        return nil
    }

    /// Starts the browser with its profile in `profile` and its output in `log`, and waits for
    /// its first answer.
    ///
    /// - Throws: ``Unavailable`` when it is not installed, does not start, or does not answer
    ///   within `startSeconds`.
    package init(profile: String, log: String, startSeconds: Double = 30) throws {
        guard let executable = Self.executable() else {
            throw Unavailable(
                description: "Chromium is not installed (apt-get install -y chromium, or set RILL_CHROMIUM)")
        }
        var toBrowser: [Int32] = [0, 0]
        var fromBrowser: [Int32] = [0, 0]
        // Socket pairs, not pipes: a write to a browser that died fails with EPIPE (MSG_NOSIGNAL)
        // instead of killing the test process with SIGPIPE.
        let stream = Int32(SOCK_STREAM.rawValue)
        guard socketpair(AF_UNIX, stream, 0, &toBrowser) == 0, socketpair(AF_UNIX, stream, 0, &fromBrowser) == 0 else {
            throw Unavailable(description: "no socket pair for Chromium: \(String(cString: strerror(errno)))")
        }
        // Not inherited by other processes, the browser's included (it gets its ends as 3 and 4).
        for fd in toBrowser + fromBrowser { _ = fcntl(fd, F_SETFD, FD_CLOEXEC) }
        // The child's ends, moved above 9 first so that neither is already 3 or 4: a descriptor
        // duplicated onto itself would keep its close-on-exec flag.
        let childIn = fcntl(toBrowser[0], F_DUPFD_CLOEXEC, 10)
        let childOut = fcntl(fromBrowser[1], F_DUPFD_CLOEXEC, 10)
        close(toBrowser[0])
        close(fromBrowser[1])
        commands = toBrowser[1]
        answers = fromBrowser[0]
        let arguments = [
            executable, "--headless", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage", "--no-first-run",
            "--no-default-browser-check", "--disable-extensions", "--disable-background-networking",
            "--disable-component-update", "--disable-sync", "--mute-audio", "--user-data-dir=\(profile)",
            "--remote-debugging-pipe", "about:blank",
        ]
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
        posix_spawn_file_actions_addopen(&actions, 1, log, O_WRONLY | O_CREAT | O_TRUNC, 0o644)
        posix_spawn_file_actions_adddup2(&actions, 1, 2)
        posix_spawn_file_actions_adddup2(&actions, childIn, 3)
        posix_spawn_file_actions_adddup2(&actions, childOut, 4)
        var attributes = posix_spawnattr_t()
        posix_spawnattr_init(&attributes)
        defer { posix_spawnattr_destroy(&attributes) }
        // A group of its own: the browser's helpers (zygote, renderers) go with it.
        posix_spawnattr_setflags(&attributes, Int16(POSIX_SPAWN_SETPGROUP))
        posix_spawnattr_setpgroup(&attributes, 0)
        let argv = arguments.map { strdup($0) } + [nil]
        defer { argv.forEach { free($0) } }
        var child: pid_t = 0
        let status = posix_spawn(&child, executable, &actions, &attributes, argv, environ)
        // The browser holds its ends now: with them closed here, its exit ends the pipe at once.
        close(childIn)
        close(childOut)
        guard status == 0 else {
            close(commands)
            close(answers)
            throw Unavailable(
                description: "Chromium (\(executable)) did not start: \(String(cString: strerror(status)))")
        }
        pid = child
        do {
            _ = try send("Browser.getVersion", timeout: startSeconds)
        } catch {
            stop()
            let output = (try? String(contentsOfFile: log, encoding: .utf8)) ?? ""
            let lines = output.split(separator: "\n").filter { !$0.contains("dbus") }.suffix(5).joined(separator: "\n")
            throw Unavailable(description: "Chromium (\(executable)) did not answer: \(error)\n\(lines)")
        }
    }

    deinit { stop() }

    private var stopped = false

    /// Closes the browser: asks it to, then kills its process group.
    package func stop() {
        guard !stopped else { return }
        stopped = true
        _ = try? send("Browser.close", timeout: 2)
        kill(-pid, SIGKILL)
        var status: Int32 = 0
        waitpid(pid, &status, 0)
        close(commands)
        close(answers)
    }

    // MARK: - The protocol

    /// Sends a command (to the page of `session`, when given) and returns its `result`.
    ///
    /// - Throws: ``Failure`` when the browser answers with an error, or not within `timeout` seconds.
    @discardableResult
    package func send(
        _ method: String, _ parameters: [String: Any] = [:], session: String? = nil, timeout: Double = 20
    ) throws -> [String: Any] {
        nextID += 1
        let id = nextID
        var message: [String: Any] = ["id": id, "method": method, "params": parameters]
        if let session { message["sessionId"] = session }
        var bytes = [UInt8](try JSONSerialization.data(withJSONObject: message))
        bytes.append(0)
        var offset = 0
        while offset < bytes.count {
            let written = bytes.withUnsafeBytes {
                Glibc.send(commands, $0.baseAddress! + offset, $0.count - offset, Int32(MSG_NOSIGNAL))
            }
            if written < 0, errno == EINTR { continue }
            guard written > 0 else { throw Failure(description: "\(method): the browser's pipe is closed") }
            offset += written
        }
        let deadline = Date().addingTimeInterval(timeout)
        while true {
            let answer = try nextMessage(until: deadline, waitingFor: method)
            guard answer["id"] as? Int == id else {
                events.append(answer)
                continue
            }
            if let error = answer["error"] as? [String: Any] {
                throw Failure(description: "\(method): \(error["message"] ?? error)")
            }
            return answer["result"] as? [String: Any] ?? [:]
        }
    }

    private func nextMessage(until deadline: Date, waitingFor method: String) throws -> [String: Any] {
        while true {
            if let end = buffer.firstIndex(of: 0) {
                let data = Data(buffer[..<end])
                buffer.removeSubrange(...end)
                guard let object = try JSONSerialization.jsonObject(with: data) as? [String: Any] else {
                    throw Failure(description: "\(method): the browser sent something that is not a JSON object")
                }
                return object
            }
            let milliseconds = Int32(max(0, min(deadline.timeIntervalSinceNow * 1000, 60_000)))
            var poller = pollfd(fd: answers, events: Int16(POLLIN), revents: 0)
            let ready = poll(&poller, 1, milliseconds)
            if ready < 0, errno == EINTR { continue }
            guard ready > 0 else { throw Failure(description: "\(method): no answer from the browser in time") }
            var chunk = [UInt8](repeating: 0, count: 1 << 16)
            let count = chunk.withUnsafeMutableBytes { read(answers, $0.baseAddress, $0.count) }
            guard count > 0 else { throw Failure(description: "\(method): the browser closed its pipe") }
            buffer.append(contentsOf: chunk[0..<count])
        }
    }

    // MARK: - Pages

    /// Opens `url` in a new tab and waits for its `load` event; returns the session to talk to
    /// its page with.
    package func open(_ url: String, timeout: Double = 20) throws -> String {
        let target = try send("Target.createTarget", ["url": "about:blank"])
        guard let targetID = target["targetId"] as? String else { throw Failure(description: "no target for \(url)") }
        let attached = try send("Target.attachToTarget", ["targetId": targetID, "flatten": true])
        guard let session = attached["sessionId"] as? String else { throw Failure(description: "no session") }
        try send("Page.enable", session: session)
        events.removeAll()
        let navigation = try send("Page.navigate", ["url": url], session: session)
        if let error = navigation["errorText"] as? String { throw Failure(description: "\(url): \(error)") }
        try waitForEvent("Page.loadEventFired", session: session, timeout: timeout)
        return session
    }

    /// Waits for an event of the browser (of the page of `session`), taking it from those that came.
    package func waitForEvent(_ method: String, session: String, timeout: Double = 20) throws {
        let matches = { (event: [String: Any]) in
            event["method"] as? String == method && event["sessionId"] as? String == session
        }
        if let index = events.firstIndex(where: matches) {
            events.remove(at: index)
            return
        }
        let deadline = Date().addingTimeInterval(timeout)
        while true {
            let message = try nextMessage(until: deadline, waitingFor: method)
            if matches(message) { return }
            events.append(message)
        }
    }

    /// Evaluates `expression` in the page of `session` (awaiting it when it is a promise) and
    /// returns its value, as JSON would carry it.
    ///
    /// - Throws: ``Failure`` with the exception's text when it throws or rejects.
    package func evaluate(_ expression: String, in session: String, timeout: Double = 20) throws -> Any? {
        let result = try send(
            "Runtime.evaluate", ["expression": expression, "returnByValue": true, "awaitPromise": true],
            session: session, timeout: timeout)
        if let exception = result["exceptionDetails"] as? [String: Any] {
            let text = (exception["exception"] as? [String: Any])?["description"] ?? exception["text"] ?? exception
            throw Failure(description: "\(text)")
        }
        return (result["result"] as? [String: Any])?["value"]
    }

    /// Waits until `condition` (a JavaScript expression) is truthy in the page, checking it each
    /// time the page's event loop turns (every 20 ms at most); fails after `timeout` seconds with
    /// the value of `describe`, an expression telling what the page shows instead.
    package func wait(
        until condition: String, in session: String, timeout: Double = 20, describe: String = "document.title"
    ) throws {
        let script = """
            new Promise((resolve, reject) => {
              const started = Date.now();
              const check = () => {
                let value = false;
                try { value = (\(condition)); } catch (error) { value = false; }
                if (value) { resolve(true); return; }
                if (Date.now() - started > \(Int(timeout * 1000))) {
                  let shown;
                  try { shown = JSON.stringify(\(describe)); } catch (error) { shown = String(error); }
                  reject(new Error('timed out waiting for ' + \(Self.jsString(condition)) + '; the page shows ' + shown));
                  return;
                }
                setTimeout(check, 20);
              };
              check();
            })
            """
        _ = try evaluate(script, in: session, timeout: timeout + 10)
    }

    /// `text` as a JavaScript string literal.
    package static func jsString(_ text: String) -> String {
        let data = try? JSONSerialization.data(withJSONObject: [text])
        let array = data.map { String(decoding: $0, as: UTF8.self) } ?? "[\"\"]"
        return String(array.dropFirst().dropLast())
    }
}
