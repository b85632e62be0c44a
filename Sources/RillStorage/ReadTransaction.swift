/// A transaction that only reads. Valid inside the closure it was given to.
package struct ReadTransaction: Transaction {
    package let pointer: OpaquePointer
    package let maxKeySize: Int
}
