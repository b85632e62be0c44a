import Foundation
import RillService

/// What a log line says of the request it is about: the request's id and client, and, once it
/// is answered, its method, path, status and duration.
package struct LogContext: Sendable {
    /// The request id (`X-Request-Id`), the client's own when it sent a sane one.
    package var requestID: String
    /// Who sent it: `unix:pid=<pid>` on the Unix socket, `<address>:<port>` over TCP.
    package var client: String
    package var method: String?
    package var path: String?
    package var status: Int?
    package var milliseconds: Double?

    package init(
        requestID: String, client: String, method: String? = nil, path: String? = nil, status: Int? = nil,
        milliseconds: Double? = nil
    ) {
        self.requestID = requestID
        self.client = client
        self.method = method
        self.path = path
        self.status = status
        self.milliseconds = milliseconds
    }

    /// The fields of a JSON line, each value in JSON already.
    var jsonFields: [(String, String)] {
        var fields = [("requestId", JSONText.string(requestID)), ("client", JSONText.string(client))]
        if let method { fields.append(("method", JSONText.string(method))) }
        if let path { fields.append(("path", JSONText.string(path))) }
        if let status { fields.append(("status", String(status))) }
        if let milliseconds, milliseconds.isFinite {
            fields.append(("milliseconds", String(format: "%.3f", milliseconds)))
        }
        return fields
    }
}
