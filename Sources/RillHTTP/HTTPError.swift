/// A request that cannot be served, answered with `status` and a JSON error.
package struct HTTPError: Error {
    package var status: Int
    package var code: String
    package var message: String
    /// The connection cannot be read further (a malformed or oversized request): close it.
    package var closesConnection = false

    package init(status: Int, code: String, message: String, closesConnection: Bool = false) {
        self.status = status
        self.code = code
        self.message = message
        self.closesConnection = closesConnection
    }
}
