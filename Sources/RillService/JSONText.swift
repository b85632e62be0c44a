import Foundation

/// JSON text of values: of log lines and of error bodies.
package enum JSONText {
    /// `value` as a JSON string: quoted, with quotes, backslashes and control characters escaped.
    package static func string(_ value: String) -> String {
        var text = "\""
        for scalar in value.unicodeScalars {
            switch scalar {
            case "\"": text += "\\\""
            case "\\": text += "\\\\"
            case "\n": text += "\\n"
            case "\r": text += "\\r"
            case "\t": text += "\\t"
            case let c where c.value < 0x20 || c.value == 0x7F:
                text += String(format: "\\u%04x", c.value)
            default: text.unicodeScalars.append(scalar)
            }
        }
        return text + "\""
    }
}
