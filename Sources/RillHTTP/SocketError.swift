import Foundation

#if canImport(Glibc)
    import Glibc
#endif

/// A failure of a socket call, with the call and errno's text.
package struct SocketError: Error, CustomStringConvertible {
    package var call: String
    package var code: Int32
    package var description: String { "\(call): \(String(cString: strerror(code)))" }

    package init(_ call: String, _ code: Int32 = errno) {
        self.call = call
        self.code = code
    }
}
