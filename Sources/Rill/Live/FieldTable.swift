/// Numbers for the top-level field names the screens of one entity's queries use.
final class FieldTable {
    private var slots: [String: Int] = [:]
    /// Changes whenever a screen bound to the table is compiled anew.
    var generation = 0
    /// The name of every slot, by number.
    private(set) var names: [String] = []

    init() {}

    var count: Int { names.count }

    /// The number of `field`, given it on first use.
    func slot(for field: String) -> Int {
        if let slot = slots[field] { return slot }
        let slot = names.count
        slots[field] = slot
        names.append(field)
        return slot
    }

    /// The number of `field`, when some screen uses it.
    func existingSlot(for field: String) -> Int? { slots[field] }
}
