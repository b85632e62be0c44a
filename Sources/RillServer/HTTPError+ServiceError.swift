import RillHTTP
import RillService

extension HTTPError {
    /// The answer to a request that failed with `error`: its status, code and message.
    init(_ error: ServiceError) {
        self.init(status: error.status, code: error.code, message: error.message)
    }
}
