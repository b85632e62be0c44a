import Foundation

/// The size of the oracle tests: small for every `make test`, larger on demand (`make oracle`)
/// through `RILL_ORACLE_RECORDS` and `RILL_ORACLE_QUERIES`.
public enum OracleScale {
    public static func records(default value: Int) -> Int {
        ProcessInfo.processInfo.environment["RILL_ORACLE_RECORDS"].flatMap(Int.init) ?? value
    }

    public static func queries(default value: Int) -> Int {
        ProcessInfo.processInfo.environment["RILL_ORACLE_QUERIES"].flatMap(Int.init) ?? value
    }

    /// The value of the environment variable `name` when it is a number, else `value`.
    public static func value(_ name: String, default value: Int) -> Int {
        ProcessInfo.processInfo.environment[name].flatMap(Int.init) ?? value
    }
}
