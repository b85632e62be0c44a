import Foundation

#if canImport(Glibc)
    import Glibc
#endif

/// A failure of a socket call, with the call and errno's text.
package struct SocketError: Error, CustomStringConvertible {
    /// The call that failed, with what it was given (`bind /run/rill.sock`).
    package var call: String
    /// The `errno` it failed with.
    package var code: Int32
    /// The call and the text of its `errno`.
    package var description: String { "\(call): \(String(cString: strerror(code)))" }

    /// A failure of `call` with `code`, by default the current `errno`.
    package init(_ call: String, _ code: Int32 = errno) {
        self.call = call
        self.code = code
    }
}
