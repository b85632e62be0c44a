/// How large a suite's run is: the short one `make test` runs, the full one of `make torture`.
package enum TortureScale: String, Sendable, CaseIterable {
    /// In `make test`: seconds, not minutes.
    case test
    /// In `make torture`: the sizes the reliability suites promise (100 kills, 50 power cuts, …).
    case torture

    /// The scale named `name`: its raw value, or `ci`, the name CI's runs give `test`
    /// (`make cluster-test` runs `rill-torture cluster --scale ci`).
    package init?(name: String) {
        if name == "ci" {
            self = .test
        } else {
            self.init(rawValue: name)
        }
    }

    /// `test` or `torture` value, by scale.
    package func pick<T>(test: T, torture: T) -> T {
        switch self {
        case .test: test
        case .torture: torture
        }
    }
}
