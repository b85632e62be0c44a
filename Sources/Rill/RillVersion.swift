/// The version of Rill: of the library, and of the `rill` tool built with it (`rill --version`).
///
/// It follows semantic versioning; the store format has a version of its own, which changes
/// far more rarely (see `Documentation/OnDiskFormat.md`).
public enum RillVersion {
    /// The version as text, for example `"0.1.0"`.
    public static let current = "0.1.0"
}
