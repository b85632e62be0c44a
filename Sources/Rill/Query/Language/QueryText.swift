/// A query's text as the lexer reads it.
enum QueryText {
    /// The text's UTF-8 bytes when every one is an ASCII character of its own: ASCII without a
    /// carriage return (a CR and the LF after it are one `Character`). Its columns are then its
    /// bytes, and its characters need no walk of grapheme boundaries. Nil otherwise.
    static func plainASCII(_ text: String) -> [UInt8]? {
        var text = text
        return text.withUTF8 { utf8 -> [UInt8]? in
            // One pass over contiguous bytes, with no early exit to keep the loop branch-light:
            // the bytes that are not plain ASCII are counted.
            var other = 0
            for byte in utf8 { other &+= (byte >= 0x80 || byte == 0x0D) ? 1 : 0 }
            return other == 0 ? Array(utf8) : nil
        }
    }
}
