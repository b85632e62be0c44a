/// What a look at the file finds of the commits being written to it (``Environment/commitActivity``).
package enum CommitActivity: Sendable {
    /// No commit is being written, or one is and a read begun now sees it.
    case none
    /// This process's writer is inside a commit: the file's writes now are its own, and the
    /// store posts the commit once it returns.
    case thisProcessCommitting
    /// Another process's commit has its meta page in the file, and a read begun now does not
    /// see it yet (LMDB publishes it in `lock.mdb` a moment after that write); also said when
    /// the file cannot be read.
    case anotherProcessPublishing
}
