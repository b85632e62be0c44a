import Foundation
import RillTestSupport
import RillWorkloads
import Testing

@testable import Rill

/// `rill log` as a history: `--before-after` held to a replay of the printed log, and every
/// filter (`--since`, `--until` by sequence and by date, `--entity`, `--author`, `--limit`,
/// `--reverse`) to the same filter applied to the whole printed log.
@Suite struct LogHistoryCommandTests {
    let directory = TemporaryDirectory()

    struct Note: PersistentModel {
        var id: String
        var text: String
        var pinned: Bool?
    }

    /// A store of random saves of gadgets and notes by three authors (nil among them).
    func makeStore(random: inout SeededGenerator) throws -> String {
        let path = directory.path("store")
        let container = try ModelContainer(
            for: Gadget.self, Note.self, configurations: ModelConfiguration(url: URL(fileURLWithPath: path)))
        let context = container.mainContext
        var gadgets: [Int: Gadget] = [:]
        var notes: Set<String> = []
        for _ in 0..<150 {
            context.author = [nil, "alice", "bob"].randomElement(using: &random)!
            if Bool.random(using: &random) {
                let id = Int.random(in: 0..<15, using: &random)
                if let old = gadgets[id], Int.random(in: 0..<3, using: &random) == 0 {
                    context.delete(old)
                    gadgets[id] = nil
                } else {
                    var gadget = gadgets[id] ?? Gadget.random(id: id, using: &random)
                    gadget.stock = Int.random(in: 0..<5, using: &random)
                    gadget.maker = Bool.random(using: &random) ? nil : "Acme"
                    context.insert(gadget)
                    gadgets[id] = gadget
                }
            } else {
                let id = "n\(Int.random(in: 0..<10, using: &random))"
                if notes.contains(id), Int.random(in: 0..<3, using: &random) == 0 {
                    try context.delete(model: Note.self, where: #Predicate { $0.id == id })
                    notes.remove(id)
                } else {
                    context.insert(Note(id: id, text: "t\(Int.random(in: 0..<3, using: &random))", pinned: nil))
                    notes.insert(id)
                }
            }
            try context.save()
        }
        return path
    }

    func log(_ arguments: [String]) throws -> [[String: Any]] {
        let run = try runBuilt("rill", ["log"] + arguments)
        #expect(run.status == 0, "rill log \(arguments): \(run.error)")
        return try run.output.split(separator: "\n").map {
            try JSONSerialization.jsonObject(with: Data($0.utf8)) as! [String: Any]
        }
    }

    /// A JSON object as text with sorted keys, for comparing two.
    func canonical(_ object: [String: Any]) throws -> String {
        String(decoding: try JSONSerialization.data(withJSONObject: object, options: [.sortedKeys]), as: UTF8.self)
    }

    @Test func beforeAndAfterAreTheValuesAReplayOfTheLogGives() throws {
        var random = SeededGenerator(label: "rill log --before-after")
        let path = try makeStore(random: &random)
        var state: [String: [String: Any]] = [:]
        var checked: [String: Int] = [:]
        for commit in try log([path, "--before-after"]) {
            for change in commit["changes"] as! [[String: Any]] {
                let key = "\(change["entity"]!)/\(change["id"]!)"
                let previous = state[key]
                let op = change["op"] as! String
                checked[op, default: 0] += 1
                switch op {
                case "insert":
                    #expect(previous == nil && change["before"] == nil)
                case "update":
                    let fields = change["fields"] as! [String]
                    let before = change["before"] as! [String: Any]
                    let after = change["after"] as! [String: Any]
                    let record = change["record"] as! [String: Any]
                    #expect(Set(before.keys) == Set(fields) && Set(after.keys) == Set(fields))
                    for field in fields {
                        #expect(
                            "\(before[field]!)" == "\(previous?[field] ?? NSNull())",
                            "commit \(commit["seq"]!) \(key).\(field), seed \(random.seed)")
                        #expect("\(after[field]!)" == "\(record[field] ?? NSNull())")
                    }
                default:
                    let before = change["before"] as! [String: Any]
                    #expect(try canonical(before) == canonical(previous ?? [:]), "commit \(commit["seq"]!)")
                }
                state[key] = change["record"] as? [String: Any]
            }
        }
        #expect(checked.keys.count == 3 && checked.values.allSatisfy { $0 > 10 }, "\(checked)")
    }

    @Test func everyFilterKeepsWhatTheSameFilterOfTheWholeLogKeeps() throws {
        var random = SeededGenerator(label: "rill log filters")
        let path = try makeStore(random: &random)
        let all = try log([path])
        let head = all.count
        func sequence(_ commit: [String: Any]) -> Int { commit["seq"] as! Int }
        for round in 0..<25 {
            var arguments = [path]
            var kept = all
            if Bool.random(using: &random) {
                let since = Int.random(in: 0...head, using: &random)
                arguments += ["--since", "\(since)"]
                kept = kept.filter { sequence($0) > since }
            }
            if Bool.random(using: &random) {
                let until = Int.random(in: 1...head, using: &random)
                if Bool.random(using: &random) {
                    arguments += ["--until", "\(until)"]
                    kept = kept.filter { sequence($0) <= until }
                } else {
                    // A commit's own timestamp, as printed, names the last commit made by then.
                    let date = all[until - 1]["timestamp"] as! String
                    arguments += ["--until", date]
                    let bound = ISO8601Time.secondsSinceReferenceDate(parsing: date)!
                    kept = kept.filter {
                        ISO8601Time.secondsSinceReferenceDate(parsing: $0["timestamp"] as! String)! <= bound
                    }
                }
            }
            var entities: Set<String>?
            if Bool.random(using: &random) {
                entities = [["Gadget"], ["Note"], ["Gadget", "Note"]].randomElement(using: &random)!
                arguments += ["--entity", entities!.sorted().joined(separator: ",")]
                kept = kept.compactMap { commit in
                    var commit = commit
                    let changes = (commit["changes"] as! [[String: Any]]).filter {
                        entities!.contains($0["entity"] as! String)
                    }
                    guard !changes.isEmpty else { return nil }
                    commit["changes"] = changes
                    return commit
                }
            }
            if Bool.random(using: &random) {
                let authors = [["alice"], ["bob"], ["alice", "bob"]].randomElement(using: &random)!
                arguments += ["--author", authors.joined(separator: ",")]
                kept = kept.filter { ($0["author"] as? String).map(authors.contains) ?? false }
            }
            if Bool.random(using: &random) {
                arguments.append("--reverse")
                kept.reverse()
            }
            if Bool.random(using: &random) {
                let limit = Int.random(in: 0...10, using: &random)
                arguments += ["--limit", "\(limit)"]
                kept = Array(kept.prefix(limit))
            }
            let printed = try log(arguments)
            #expect(printed.map(sequence) == kept.map(sequence), "round \(round): \(arguments), seed \(random.seed)")
            #expect(
                printed.map { ($0["changes"] as! [[String: Any]]).count }
                    == kept.map {
                        ($0["changes"] as! [[String: Any]]).count
                    })
        }
    }
}
