/// Identifies a directory by device and inode, so two spellings of one path share one environment.
package struct FileID: Hashable, Sendable {
    package let device: UInt64
    package let inode: UInt64
}
