import Foundation

extension SortDescriptor {
    /// `compare(_:_:)`, total over floating-point values and dates: a NaN sorts after every
    /// number (a NaN date after every date; before them in a reverse sort), and two NaNs tie, as
    /// the order of stored values puts them (`QueryValueOrder.sortOrder`). `compare` calls a NaN
    /// neither before nor after any number, which leaves a sort of rows holding one in no order
    /// at all.
    func totalCompare(_ lhs: Compared, _ rhs: Compared) -> ComparisonResult {
        guard let keyPath, Self.mayBeNaN(type(of: keyPath).valueType),
            let order = Self.nanOrder(lhs[keyPath: keyPath], rhs[keyPath: keyPath])
        else {
            return compare(lhs, rhs)
        }
        switch (self.order, order) {
        case (.forward, _), (_, .orderedSame): return order
        case (.reverse, .orderedAscending): return .orderedDescending
        case (.reverse, .orderedDescending): return .orderedAscending
        }
    }

    private static func mayBeNaN(_ type: Any.Type) -> Bool {
        type == Double.self || type == Double?.self || type == Float.self || type == Float?.self
            || type == Date.self || type == Date?.self
    }

    /// The ascending order of two values when one of them is a NaN; nil when neither is (or one
    /// is nil, which `compare` puts first).
    private static func nanOrder(_ lhs: Any, _ rhs: Any) -> ComparisonResult? {
        func nan(_ value: Any) -> Bool? {
            if let double = value as? Double { return double.isNaN }
            if let float = value as? Float { return float.isNaN }
            if let date = value as? Date { return date.timeIntervalSinceReferenceDate.isNaN }
            return nil
        }
        guard let left = nan(lhs), let right = nan(rhs), left || right else { return nil }
        if left && right { return .orderedSame }
        return left ? .orderedDescending : .orderedAscending
    }
}
