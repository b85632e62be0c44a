/// Where `rill serve` listens, or where `rill watch --connect` connects.
package enum SocketAddress: CustomStringConvertible {
    case unix(String)
    case tcp(host: String, port: UInt16)

    /// `unix:<path>` or `http://host:port`.
    package var description: String {
        switch self {
        case .unix(let path): "unix:\(path)"
        case .tcp(let host, let port): host.contains(":") ? "http://[\(host)]:\(port)" : "http://\(host):\(port)"
        }
    }

    /// `host:port`, `[v6]:port` or `:port` (loopback).
    package static func tcp(_ text: String) -> SocketAddress? {
        var host = "127.0.0.1"
        var portText = Substring(text)
        if text.hasPrefix("["), let close = text.firstIndex(of: "]") {
            host = String(text[text.index(after: text.startIndex)..<close])
            portText = text[text.index(after: close)...].drop { $0 == ":" }
        } else if let colon = text.lastIndex(of: ":") {
            if colon != text.startIndex { host = String(text[..<colon]) }
            portText = text[text.index(after: colon)...]
        }
        guard let port = UInt16(portText) else { return nil }
        return .tcp(host: host == "localhost" ? "127.0.0.1" : host, port: port)
    }
}
