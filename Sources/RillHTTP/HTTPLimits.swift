/// Limits on what a client may send.
package struct HTTPLimits {
    /// The request line and headers together.
    package var headerBytes: Int
    package var bodyBytes: Int

    package init(headerBytes: Int = 16 << 10, bodyBytes: Int = 16 << 20) {
        self.headerBytes = headerBytes
        self.bodyBytes = bodyBytes
    }
}
