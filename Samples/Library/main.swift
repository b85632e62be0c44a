// The library sample: a small shelf of books in an embedded Rill store.
//
//   swift run library-demo [store-directory]
//
// Each run stocks the shelf with any book it lacks, lists the unread books by author then title
// (a live query, which follows every save), and finishes reading the first of them, so the store
// (and its log) carries over from run to run.
import Dispatch
import Foundation
import Rill

struct Book: PersistentModel {
    var id: String  // the ISBN
    var title: String
    var author: String
    var year: Int
    var pages: Int
    var isRead = false
}

let shelf = [
    Book(id: "978-0441013593", title: "Dune", author: "Frank Herbert", year: 1965, pages: 617),
    Book(id: "978-0141439518", title: "Pride and Prejudice", author: "Jane Austen", year: 1813, pages: 480),
    Book(id: "978-0141439587", title: "Emma", author: "Jane Austen", year: 1815, pages: 474),
    Book(id: "978-0156027328", title: "Solaris", author: "Stanisław Lem", year: 1961, pages: 204),
    Book(id: "978-0547572482", title: "The Left Hand of Darkness", author: "Ursula K. Le Guin", year: 1969, pages: 304),
    Book(id: "978-0060931728", title: "The Dispossessed", author: "Ursula K. Le Guin", year: 1974, pages: 387),
    Book(id: "978-0547928227", title: "The Hobbit", author: "J. R. R. Tolkien", year: 1937, pages: 300),
    Book(id: "978-0679734529", title: "Ubik", author: "Philip K. Dick", year: 1969, pages: 202, isRead: true),
    Book(id: "978-0374529260", title: "The Periodic Table", author: "Primo Levi", year: 1975, pages: 233),
]

let directory = CommandLine.arguments.dropFirst().first ?? ".build/rill-demo/library"
let container = try ModelContainer(
    for: Book.self,
    configurations: ModelConfiguration(url: URL(fileURLWithPath: directory)))
let context = container.mainContext
context.author = "library-demo"
print("Store: \(directory)")

// Stock the shelf: one atomic save for all the books the store lacks.
for book in shelf where try context.model(Book.self, id: book.id) == nil {
    context.insert(book)
}
if let sequence = try context.save() {
    print("Stocked the shelf (commit \(sequence)).")
} else {
    print("The shelf is already stocked.")
}

// Unread books, by author then title: a live query, whose results follow every save.
let unread = try LiveQuery(
    FetchDescriptor<Book>(
        predicate: #Predicate { !$0.isRead },
        sortBy: [SortDescriptor(\.author), SortDescriptor(\.title)]),
    in: container)
let total = try context.fetchCount(FetchDescriptor<Book>())
print("\nUnread: \(unread.count) of \(total) books (as of commit \(unread.sequence))")
for book in unread {
    let author = book.author.padding(toLength: 20, withPad: " ", startingAt: 0)
    print("  \(author) \(book.title) (\(book.year), \(book.pages) pages)")
}

// Print what each commit changes in the unread list.
let changes = DispatchQueue(label: "library-demo.changes")
let observation = unread.observe(on: changes) { change in
    for removal in change.removals {
        print("  live: \"\(removal.element.title)\" left the unread list at offset \(removal.offset)")
    }
    for insertion in change.insertions {
        print("  live: \"\(insertion.element.title)\" joined the unread list at offset \(insertion.offset)")
    }
}

// Finish the first unread book.
if var next = unread.first {
    next.isRead = true
    context.insert(next)
    let sequence = try context.save()
    print("\nFinished \"\(next.title)\" (commit \(sequence ?? 0)).")
    try unread.catchUp()
    changes.sync {}
    print("Unread now: \(unread.count), as of commit \(unread.sequence). Run again to read the next one.")
} else {
    print("\nEvery book is read. Remove \(directory) to start over.")
}
observation.cancel()
