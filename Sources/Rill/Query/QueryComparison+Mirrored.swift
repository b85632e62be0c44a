extension QueryComparison {
    /// The comparison with its operands swapped: `a < b` is `b > a`.
    var mirrored: QueryComparison {
        switch self {
        case .equal, .notEqual: self
        case .less: .greater
        case .lessOrEqual: .greaterOrEqual
        case .greater: .less
        case .greaterOrEqual: .lessOrEqual
        }
    }
}
