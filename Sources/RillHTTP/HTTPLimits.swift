/// Limits on what a client may send.
package struct HTTPLimits {
    /// The request line and headers together.
    package var headerBytes: Int
    /// A request body (`Content-Length`).
    package var bodyBytes: Int

    /// Limits of 16 KiB of head and 16 MiB of body unless told otherwise.
    package init(headerBytes: Int = 16 << 10, bodyBytes: Int = 16 << 20) {
        self.headerBytes = headerBytes
        self.bodyBytes = bodyBytes
    }
}
