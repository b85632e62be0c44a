// A child process for the tests: it writes or reads a store, reporting on stdout, so the tests
// can kill it at any moment, run two of them at once, or run it under another user.
import Foundation
import Rill
import RillLocks
import RillTestSupport
import RillWorkloads

#if canImport(Glibc)
    import Glibc
#endif

func say(_ line: String) {
    FileHandle.standardOutput.write(Data((line + "\n").utf8))
}

func fail(_ line: String) -> Never {
    FileHandle.standardError.write(Data((line + "\n").utf8))
    exit(1)
}

func container(_ path: String, mapSize: Int = 64 << 20) throws -> ModelContainer {
    try ModelContainer(
        for: Counter.self,
        configurations: ModelConfiguration(url: URL(fileURLWithPath: path), initialMapSize: mapSize))
}

let arguments = CommandLine.arguments.dropFirst()
guard let command = arguments.first else { fail("usage: rill-test-helper <command> …") }
let rest = Array(arguments.dropFirst())

/// The records `build-index` stores, first without an index.
struct Item: PersistentModel {
    var id: Int
    var value: Int
}

/// The same records, with an index the store does not have yet.
struct IndexedItem: PersistentModel {
    static let entityName = "Item"
    static let indexes = [ModelIndex<IndexedItem>(\.value)]
    var id: Int
    var value: Int
}

do {
    switch command {
    case "default-instance":
        // default-instance <store> <value>: waits for the file `<store>.go`, then makes sure the
        // Counter with id 1 exists, with `value` as the default; prints the value it holds.
        while access(rest[0] + ".go", F_OK) != 0 { usleep(200) }
        let settings = try container(rest[0]).mainContext.fetchOrInsert(Counter.self, id: 1) {
            Counter(id: 1, value: Int(rest[1])!)
        }
        say("\(settings.value)")

    case "unique-upsert":
        // unique-upsert <store> <id> <name>: waits for the file `<store>.go`, then saves an Account with id
        // `id` and the email every run uses; prints the id of the Account the store then holds.
        while access(rest[0] + ".go", F_OK) != 0 { usleep(200) }
        let container = try ModelContainer(
            for: Account.self, configurations: ModelConfiguration(url: URL(fileURLWithPath: rest[0])))
        let stored = try container.mainContext.upsertAndFetch(
            Account(id: Int(rest[1])!, email: "shared@example.com", name: rest[2]))
        say("\(stored.id) \(stored.name)")
    case "migrate":
        // migrate <store>: waits for the file `<store>.go`, then opens the store for TaskV2 (which
        // migrates it from TaskV1 when that has not been done); prints the number of tasks.
        while access(rest[0] + ".go", F_OK) != 0 { usleep(200) }
        let migrated = try ModelContainer(
            for: TaskV2.self, configurations: ModelConfiguration(url: URL(fileURLWithPath: rest[0])))
        say("\(try migrated.mainContext.fetchCount(FetchDescriptor<TaskV2>()))")

    case "save-loop":
        // save-loop <store> <seed>: saves forever; prints "saved <seq>" after each save returns.
        var random = SeededGenerator(seed: UInt64(rest[1])!)
        let context = ModelContext(try container(rest[0]))
        var value = 0
        while true {
            for _ in 0..<Int.random(in: 1...4, using: &random) {
                value += 1
                let payload = String(repeating: "x", count: Int.random(in: 0...3000, using: &random))
                context.insert(Counter(id: Int.random(in: 0..<64, using: &random), value: value, payload: payload))
            }
            if Int.random(in: 0..<8, using: &random) == 0 {
                context.delete(Counter(id: Int.random(in: 0..<64, using: &random), value: 0))
            }
            if let sequence = try context.save() { say("saved \(sequence)") }
        }

    case "random-saves":
        // random-saves <store> <seed> <count>: <count> saves of 1 to 3 random changes to Counters
        // 0..<40 (inserts, updates, deletes), a millisecond apart; prints "saved <seq>" after each.
        var random = SeededGenerator(seed: UInt64(rest[1])!)
        let context = ModelContext(try container(rest[0]))
        for _ in 0..<Int(rest[2])! {
            for _ in 0..<Int.random(in: 1...3, using: &random) {
                let id = Int.random(in: 0..<40, using: &random)
                if Int.random(in: 0..<4, using: &random) == 0 {
                    context.delete(Counter(id: id, value: 0))
                } else {
                    context.insert(Counter(id: id, value: Int.random(in: 0..<100, using: &random)))
                }
            }
            if let sequence = try context.save() { say("saved \(sequence)") }
            usleep(1_000)
        }
        say("done")

    case "write":
        // write <store> <author> <count>: <count> saves, each inserting one record of its own.
        let context = ModelContext(try container(rest[0]))
        context.author = rest[1]
        let count = Int(rest[2])!
        let base = rest[1].hashValue & 0xFFFF_FFFF
        for index in 0..<count {
            context.insert(Counter(id: base * 10_000 + index, value: index, payload: rest[1]))
            try context.save()
        }
        say("done")

    case "read-loop":
        // read-loop <store> <stop-file>: reads until the stop file exists; the head must never go back.
        let reader = try container(rest[0])
        let context = ModelContext(reader)
        var reads = 0
        var head: UInt64 = 0
        var lastCount = 0
        while !FileManager.default.fileExists(atPath: rest[1]) {
            let now = try reader.lastSequence()
            guard now >= head else { fail("the log head went back from \(head) to \(now)") }
            head = now
            lastCount = try context.fetchCount(FetchDescriptor<Counter>())
            reads += 1
        }
        say("reads \(reads) head \(head) count \(lastCount)")

    case "count-loop":
        // count-loop <store> <stop-file> <count>…: counts the Counters until the stop file exists; each
        // count must be one of the counts given; prints "counted" after the first, then each count
        // seen with how often ("seen <count> <times>", by count).
        let allowed = Set(rest.dropFirst(2).map { Int($0)! })
        let context = ModelContext(try container(rest[0]))
        var seen: [Int: Int] = [:]
        while !FileManager.default.fileExists(atPath: rest[1]) {
            let count = try context.fetchCount(FetchDescriptor<Counter>())
            guard allowed.contains(count) else { fail("counted \(count) Counters, none of \(allowed.sorted())") }
            if seen.isEmpty { say("counted") }
            seen[count, default: 0] += 1
        }
        for (count, times) in seen.sorted(by: { $0.key < $1.key }) { say("seen \(count) \(times)") }

    case "http-get":
        // http-get <socket> <path>: a GET on the Unix socket; prints "status <code>", "closed"
        // when the daemon closed the connection unanswered, or "refused <error>" when it cannot
        // connect (run under `setpriv` as another user).
        let client: HTTPTestClient
        do {
            client = try HTTPTestClient(unix: rest[0])
        } catch {
            say("refused \(error)")
            exit(0)
        }
        say(client.request("GET", rest[1]).map { "status \($0.status)" } ?? "closed")

    case "open-as-nobody":
        // open-as-nobody <store>: drops root, then opens the store; prints the outcome.
        guard setgid(65534) == 0, setuid(65534) == 0 else { fail("cannot drop privileges") }
        do {
            _ = try container(rest[0])
            say("opened")
        } catch let error as RillError {
            say("error \(error.code) \(error.message)")
        }

    case "hold-read":
        // hold-read <store>: opens a read transaction, prints "reading", and holds it until killed.
        let reader = try container(rest[0])
        try reader.store.read { _ in
            say("reading")
            while true { pause() }
        }

    case "create":
        // create <store>: creates a store (a container with Counters); prints "opened" or
        // "error <code> <message> | <underlying error>".
        do {
            _ = try container(rest[0])
            say("opened")
        } catch let error as RillError {
            say("error \(error.code) \(error.message) | \(error.underlyingError.map { "\($0)" } ?? "")")
        }

    case "read-only":
        // read-only <store>: a container that does not allow saving fetches and follows the
        // Counters, then tries to save; prints "count <n> live <n>" and the save's outcome.
        do {
            let reader = try ModelContainer(
                for: Counter.self,
                configurations: ModelConfiguration(url: URL(fileURLWithPath: rest[0]), allowsSave: false))
            let context = ModelContext(reader)
            let count = try context.fetchCount(FetchDescriptor<Counter>())
            let live = try LiveQuery(FetchDescriptor<Counter>(), in: reader)
            say("count \(count) live \(live.count)")
            context.insert(Counter(id: 1_000, value: 1))
            _ = try context.save()
            say("saved")
        } catch let error as RillError {
            say("error \(error.code) \(error.message)")
        }

    case "build-index":
        // build-index <store> <count>: stores <count> Items, then opens the store with a model that declares an
        // index on them, with standard error on a terminal; prints each progress report ("progress <completed>
        // <total> <phase>"), then "stderr <bytes>": what the library wrote to the terminal meanwhile.
        let url = URL(fileURLWithPath: rest[0])
        do {
            let context = ModelContext(try ModelContainer(for: Item.self, configurations: ModelConfiguration(url: url)))
            for id in 0..<Int(rest[1])! { context.insert(Item(id: id, value: id % 97)) }
            try context.save()
        }
        // Standard error on a pseudo-terminal, where a library that drew progress bars would draw one; the
        // unlock and number requests are Linux's TIOCSPTLCK and TIOCGPTN.
        let terminal = open("/dev/ptmx", O_RDWR | O_NOCTTY)
        var unlock: CInt = 0
        var number: CUnsignedInt = 0
        let slave =
            terminal >= 0 && ioctl(terminal, 0x4004_5431, &unlock) == 0 && ioctl(terminal, 0x8004_5430, &number) == 0
            ? open("/dev/pts/\(number)", O_RDWR | O_NOCTTY) : -1
        let standardError = dup(STDERR_FILENO)
        if slave >= 0 { dup2(slave, STDERR_FILENO) }
        say("terminal \(isatty(STDERR_FILENO) != 0 ? "yes" : "no")")
        let reports = Lock<[StoreProgress]>([])
        _ = try ModelContainer(for: IndexedItem.self, configurations: ModelConfiguration(url: url)) { progress in
            reports.withLock { $0.append(progress) }
        }
        dup2(standardError, STDERR_FILENO)
        if slave >= 0 { close(slave) }
        for report in reports.withLock({ $0 }) { say("progress \(report.completed) \(report.total) \(report.phase)") }
        var written = 0
        if slave >= 0 {
            _ = fcntl(terminal, F_SETFL, fcntl(terminal, F_GETFL) | O_NONBLOCK)
            var buffer = [UInt8](repeating: 0, count: 4096)
            while case let count = read(terminal, &buffer, buffer.count), count > 0 { written += count }
        }
        say("stderr \(written)")

    default:
        fail("unknown command \(command)")
    }
} catch {
    fail("error: \(error)")
}
