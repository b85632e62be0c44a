// The tasks sample: the classic fetched-results list, kept current by a live query.
//
//   swift run tasks-demo [store-directory]
//
// Incomplete tasks sorted by due date, then priority (highest first); each add, toggle and delete
// is followed by the change the live list was told. Then a search over title or notes,
// ignoring case, and a journal of 20,000 entries fetched 5 at a time through an index, with the
// plan `explain` gives. Each run starts from an empty store: its own default one, emptied, or a
// new directory given.
import Dispatch
import Foundation
import Rill

struct Task: PersistentModel {
    var id: Int
    var title: String
    var notes: String
    var due: Date
    var priority: Int
    var isDone = false
}

struct JournalEntry: PersistentModel {
    var id: Int
    var day: Date
    var text: String
    static let indexes: [ModelIndex<JournalEntry>] = [ModelIndex(\.day)]
}

let given = CommandLine.arguments.dropFirst().first
let path = given ?? ".build/rill-demo/tasks"
// The sample starts from an empty store: its own default one is removed, a directory given must be new.
if given == nil {
    try? FileManager.default.removeItem(atPath: path)
} else if FileManager.default.fileExists(atPath: path) {
    FileHandle.standardError.write(Data("tasks-demo: \(path) exists; give a directory that does not\n".utf8))
    exit(64)
}
let container = try ModelContainer(
    for: Task.self, JournalEntry.self, configurations: ModelConfiguration(url: URL(fileURLWithPath: path)))
let context = container.mainContext
let start = Date(timeIntervalSince1970: 1_790_000_000)
func day(_ number: Int) -> Date { start.addingTimeInterval(Double(number) * 86_400) }

// The list: incomplete tasks, by due date, then priority, highest first.
let incomplete = try LiveQuery(
    FetchDescriptor<Task>(
        predicate: #Predicate { !$0.isDone },
        sortBy: [SortDescriptor(\.due), SortDescriptor(\.priority, order: .reverse)]),
    in: container)
let queue = DispatchQueue(label: "tasks-demo.changes")
let observation = incomplete.observe(on: queue) { change in
    for removal in change.removals { print("  - \(removal.element.title) (was at \(removal.offset))") }
    for insertion in change.insertions { print("  + \(insertion.element.title) at \(insertion.offset)") }
    for move in change.moves { print("  > \(move.element.title) \(move.from) → \(move.to)") }
    for update in change.updates { print("  ~ \(update.element.title) at \(update.offset)") }
}

func show(_ title: String) throws {
    try incomplete.catchUp()
    queue.sync {}
    print(
        "\(title): "
            + incomplete.map { "\($0.title) (day \(Int($0.due.timeIntervalSince(start) / 86_400)), p\($0.priority))" }
            .joined(separator: ", "))
}

print("Add three tasks:")
context.insert(Task(id: 1, title: "Write report", notes: "Quarterly NUMBERS", due: day(2), priority: 1))
context.insert(Task(id: 2, title: "Call plumber", notes: "kitchen sink", due: day(1), priority: 2))
context.insert(Task(id: 3, title: "Pay rent", notes: "before the 5th", due: day(2), priority: 3))
try context.save()
try show("Incomplete")

print("Toggle \"Call plumber\" done:")
var plumber = try context.model(Task.self, id: 2)!
plumber.isDone = true
context.insert(plumber)
try context.save()
try show("Incomplete")

print("Delete \"Write report\":")
context.delete(try context.model(Task.self, id: 1)!)
try context.save()
try show("Incomplete")
observation.cancel()

// A search over title or notes, ignoring case.
let text = "numbers"
context.insert(Task(id: 4, title: "Numbers for Bob", notes: "", due: day(3), priority: 1))
context.insert(Task(id: 5, title: "Budget", notes: "the numbers, again", due: day(4), priority: 2))
try context.save()
let search = FetchDescriptor<Task>(
    predicate: #Predicate { $0.title.localizedStandardContains(text) || $0.notes.localizedStandardContains(text) },
    sortBy: [SortDescriptor(\.id)])
print("Search \"\(text)\": " + (try context.fetch(search)).map(\.title).joined(separator: ", "))

// A journal of 20,000 entries, the latest five fetched through the index on `day`.
for number in 0..<20_000 {
    context.insert(JournalEntry(id: number, day: day(number), text: "entry \(number)"))
}
try context.save()
let cutoff = day(19_990)
var latest = FetchDescriptor<JournalEntry>(predicate: #Predicate { $0.day >= cutoff }, sortBy: [SortDescriptor(\.day)])
latest.fetchLimit = 5
print("Journal from day 19990, first 5: " + (try context.fetch(latest)).map(\.text).joined(separator: ", "))
print(try context.explain(latest))
