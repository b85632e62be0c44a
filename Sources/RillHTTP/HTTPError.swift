/// A request that cannot be served, answered with `status` and a JSON error.
package struct HTTPError: Error {
    /// The HTTP status of the answer.
    package var status: Int
    /// A short name of the failure, for programs (`headersTooLarge`).
    package var code: String
    /// What went wrong, for a person.
    package var message: String
    /// The connection cannot be read further (a malformed or oversized request): close it.
    package var closesConnection = false

    /// A failure answered with `status`; `closesConnection` when the connection cannot be read further.
    package init(status: Int, code: String, message: String, closesConnection: Bool = false) {
        self.status = status
        self.code = code
        self.message = message
        self.closesConnection = closesConnection
    }
}
