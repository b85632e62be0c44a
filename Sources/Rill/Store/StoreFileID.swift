import RillStorage

/// A store file as this process knows it (its device and inode): two `Store`s of one file, opened
/// through different paths, have the same one.
package struct StoreFileID: Hashable, Sendable {
    private let file: FileID

    init(_ file: FileID) { self.file = file }
}
