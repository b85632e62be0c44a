/// A named database inside an environment.
package struct Database: Hashable, Sendable {
    /// LMDB's handle, valid for the life of the environment.
    package let handle: UInt32
    /// The database's name.
    package let name: String
}
