import RillHTTP

/// A file of the live web page that `rill serve` ships (Documentation/Protocol.md, "The web page"):
/// its path, its content type and its text, compiled into the binary.
///
/// The page holds no data, so it is served to anyone, without a token; everything it shows it
/// asks of the API with the token the user gives it, under the API's own rules.
struct WebPageAsset: Sendable {
    /// The path it is served at.
    let path: String
    /// Its `Content-Type`.
    let contentType: String
    /// Its text.
    let text: String

    /// Every file of the page.
    static let all: [WebPageAsset] = [.page, .script, .style, .icon, .client]

    // MARK: - Serving

    /// Whether `path` is the page's: `/`, `/index.html` or under `/ui/`. Those paths are served
    /// without a token.
    static func isPagePath(_ path: String) -> Bool {
        path == "/" || path == "/index.html" || path.hasPrefix("/ui/")
    }

    /// The file served at `path`, nil when there is none.
    static func at(_ path: String) -> WebPageAsset? {
        let wanted = path == "/index.html" ? "/" : path
        return all.first { $0.path == wanted }
    }

    /// The answer to a request of one of the page's paths (``isPagePath(_:)``): the file, 404
    /// `notFound` when there is none, 405 for a method other than `GET`.
    static func response(to request: HTTPRequest) -> HTTPResponse {
        guard request.method == "GET" else {
            return .error(
                HTTPError(
                    status: 405, code: "methodNotAllowed", message: "\(request.path) takes GET, not \(request.method)"))
        }
        guard let asset = at(request.path) else {
            let paths = all.map(\.path).joined(separator: ", ")
            return .error(
                HTTPError(
                    status: 404, code: "notFound", message: "the page has no file \(request.path) (it has \(paths))")
            )
        }
        return HTTPResponse(status: 200, headers: asset.headers, body: Array(asset.text.utf8))
    }

    /// The headers of the file: its type, no caching across daemon versions without asking, and
    /// a policy that lets the page load nothing but its own files and talk only to its daemon.
    private var headers: [(String, String)] {
        [
            ("Content-Type", contentType),
            ("Cache-Control", "no-cache"),
            ("X-Content-Type-Options", "nosniff"),
            ("Referrer-Policy", "no-referrer"),
            (
                "Content-Security-Policy",
                "default-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'; object-src 'none'"
            ),
        ]
    }
}
