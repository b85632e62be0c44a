// The text of /ui/icon.svg, compiled into the daemon: the page needs no files beside the binary.

extension WebPageAsset {
    /// The page's icon, so that a browser does not ask the API for `/favicon.ico`.
    static let icon = WebPageAsset(
        path: "/ui/icon.svg", contentType: "image/svg+xml",
        text: #"""
            <svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 32 32">
              <rect width="32" height="32" rx="7" fill="#2f6fdb"/>
              <path d="M5 20c4-6 7-6 11 0s7 6 11 0" fill="none" stroke="#fff" stroke-width="3" stroke-linecap="round"/>
              <path d="M5 12c4-6 7-6 11 0s7 6 11 0" fill="none" stroke="#fff" stroke-width="3" stroke-linecap="round" opacity=".6"/>
            </svg>
            """#)
}
