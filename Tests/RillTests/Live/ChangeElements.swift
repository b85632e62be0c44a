@testable import Rill

/// The oracle of the elements a change carries: every element it names as it was is the one at
/// its old offset in the results before the change, and every element it names as it is now the
/// one at its new offset in the results after it (a fresh fetch); and the change as a
/// `CollectionDifference` turns the one into the other too.
struct ChangeElements {
    /// How many moves and updates were checked, and how many of them changed their element.
    var checked = 0
    var changed = 0

    /// What is wrong with the elements of `change`, from `previous` to `next`; empty when nothing.
    mutating func mismatches<Element>(
        of change: ResultsChange<Element>, previous: [Element], next: [Element], equal: (Element, Element) -> Bool
    ) -> [String] {
        var found: [String] = []
        func check(_ what: String, _ element: Element, _ list: [Element], _ offset: Int, _ name: String) {
            guard list.indices.contains(offset) else {
                found.append("\(what) at \(offset): past the \(name) results (\(list.count))")
                return
            }
            if !equal(element, list[offset]) { found.append("\(what) at \(offset): not the \(name) element") }
        }
        for removal in change.removals { check("removal", removal.element, previous, removal.offset, "previous") }
        for insertion in change.insertions { check("insertion", insertion.element, next, insertion.offset, "new") }
        for move in change.moves {
            check("move's old element", move.oldElement, previous, move.from, "previous")
            check("move's element", move.element, next, move.to, "new")
            count(move.oldElement, move.element, equal)
        }
        for update in change.updates {
            check("update's old element", update.oldElement, previous, update.oldOffset, "previous")
            check("update's element", update.element, next, update.offset, "new")
            count(update.oldElement, update.element, equal)
        }
        // The same change as a `CollectionDifference` leads to the same results.
        if let applied = previous.applying(change.difference(from: previous)) {
            if applied.count != next.count || !zip(applied, next).allSatisfy(equal) {
                found.append("the difference does not lead to the new results")
            }
        } else {
            found.append("the difference does not apply to the previous results")
        }
        return found
    }

    private mutating func count<Element>(_ old: Element, _ new: Element, _ equal: (Element, Element) -> Bool) {
        checked += 1
        if !equal(old, new) { changed += 1 }
    }
}
