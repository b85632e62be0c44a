// The settings sample: one settings record, created with defaults at first launch, changed, and
// found again after a restart — exactly one, even when two processes start at once.
//
//   swift run settings-demo [store-directory] [--font-size N] [--theme system|light|dark]
//
// Each run makes sure the settings exist (`fetchOrInsert`: the default is saved only when no
// record has the identifier, decided inside the save), prints them, then applies the changes
// given, printing what the live query of the settings was told.
import Dispatch
import Foundation
import Rill

enum Theme: String, Codable, Sendable, CaseIterable { case system, light, dark }

struct Settings: PersistentModel {
    var id: String
    var theme: Theme
    var fontSize: Int
    var notifications: Bool
}

var arguments = Array(CommandLine.arguments.dropFirst())
let directory = arguments.first.map { $0.hasPrefix("--") ? nil : $0 } ?? nil
if directory != nil { arguments.removeFirst() }
let path = directory ?? ".build/rill-demo/settings"
let container = try ModelContainer(
    for: Settings.self, configurations: ModelConfiguration(url: URL(fileURLWithPath: path)))
let context = container.mainContext
context.author = "settings-demo"

let before = try container.lastSequence()
var settings = try context.fetchOrInsert(Settings.self, id: "main") {
    Settings(id: "main", theme: .system, fontSize: 14, notifications: true)
}
let created = try container.lastSequence() != before
print(created ? "Created the default settings (commit \(try container.lastSequence()))." : "Found the settings.")
print("  theme \(settings.theme.rawValue), font size \(settings.fontSize), notifications \(settings.notifications)")

// The settings as a live query: every save of them, from any process, is told here.
let live = try LiveQuery(FetchDescriptor<Settings>(), in: container)
let queue = DispatchQueue(label: "settings-demo.changes")
let observation = live.observe(on: queue) { change in
    for update in change.updates {
        let (old, new) = (update.oldElement, update.element)
        if old.fontSize != new.fontSize { print("  live: font size \(old.fontSize) → \(new.fontSize)") }
        if old.theme != new.theme { print("  live: theme \(old.theme.rawValue) → \(new.theme.rawValue)") }
    }
}

var changed = false
while arguments.count >= 2 {
    let (option, value) = (arguments.removeFirst(), arguments.removeFirst())
    switch option {
    case "--font-size":
        guard let size = Int(value), (6...72).contains(size) else {
            FileHandle.standardError.write(Data("settings-demo: --font-size takes 6 to 72; got \(value)\n".utf8))
            exit(64)
        }
        settings.fontSize = size
    case "--theme":
        guard let theme = Theme(rawValue: value) else {
            FileHandle.standardError.write(
                Data("settings-demo: --theme takes system, light or dark; got \(value)\n".utf8))
            exit(64)
        }
        settings.theme = theme
    default:
        FileHandle.standardError.write(Data("settings-demo: unknown option \(option)\n".utf8))
        exit(64)
    }
    changed = true
}
if changed {
    context.insert(settings)
    if let sequence = try context.save() { print("Saved the settings (commit \(sequence)).") }
    try live.catchUp()
}
queue.sync {}
observation.cancel()
