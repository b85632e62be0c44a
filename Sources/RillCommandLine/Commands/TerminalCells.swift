/// Widths of text in terminal cells, and text cut to a width, for a screen that must not wrap.
///
/// A character (a grapheme cluster) takes the width of its first scalar: 2 for the East Asian
/// wide and fullwidth ranges and for emoji shown as pictures, 0 for a combining mark or a format
/// character alone, 1 otherwise. It is what terminals do for these (wcwidth), closely enough for
/// a table: a rarer script may be off by a cell, never by a line.
enum TerminalCells {
    /// The cells `text` takes.
    static func width(of text: some StringProtocol) -> Int {
        var total = 0
        for character in text { total += width(of: character) }
        return total
    }

    /// The cells one character takes.
    static func width(of character: Character) -> Int {
        if character.isASCII { return 1 }
        let scalars = character.unicodeScalars
        guard let first = scalars.first else { return 0 }
        // An emoji made a picture by its variation selector is two cells wide.
        if scalars.contains(where: { $0.value == 0xFE0F }) { return 2 }
        return width(of: first)
    }

    /// The cells one scalar takes when it starts a character.
    static func width(of scalar: Unicode.Scalar) -> Int {
        let value = scalar.value
        switch scalar.properties.generalCategory {
        case .nonspacingMark, .enclosingMark, .format: return 0
        default: break
        }
        if scalar.properties.isEmojiPresentation { return 2 }
        for range in wideRanges where range.contains(value) { return 2 }
        return 1
    }

    /// The East Asian wide and fullwidth blocks (Hangul Jamo, CJK, kana, Hangul syllables, CJK
    /// compatibility, fullwidth forms, the supplementary ideographic planes).
    private static let wideRanges: [ClosedRange<UInt32>] = [
        0x1100...0x115F, 0x2E80...0x303E, 0x3041...0x33FF, 0x3400...0x4DBF, 0x4E00...0x9FFF, 0xA000...0xA4CF,
        0xAC00...0xD7A3, 0xF900...0xFAFF, 0xFE30...0xFE4F, 0xFF00...0xFF60, 0xFFE0...0xFFE6, 0x20000...0x3FFFD,
    ]

    // MARK: - Fitting

    /// `text` in at most `width` cells: whole when it fits, else its longest prefix that leaves a
    /// cell for "…", then "…".
    static func truncate(_ text: String, to width: Int) -> String {
        guard width > 0 else { return "" }
        if text.utf8.count <= width, text.utf8.allSatisfy({ $0 < 0x80 }) { return text }
        guard Self.width(of: text) > width else { return text }
        var kept = ""
        var used = 0
        for character in text {
            let cells = Self.width(of: character)
            if used + cells > width - 1 { break }
            kept.append(character)
            used += cells
        }
        return kept + "…"
    }

    /// `text` cut to `width` cells (with "…" when cut) and padded with spaces to exactly `width`.
    static func fit(_ text: String, to width: Int) -> String {
        let cut = truncate(text, to: width)
        let missing = width - Self.width(of: cut)
        return missing > 0 ? cut + String(repeating: " ", count: missing) : cut
    }

    /// `text` with every character that could steer a terminal shown as its escape, `\u{1B}` for
    /// ESC: the control characters (C0, DEL, C1) and the bidirectional controls (U+061C, U+200E,
    /// U+200F, U+202A–U+202E, U+2066–U+2069). A record's value can then neither move the cursor,
    /// recolor or clear the screen, ring the bell, nor reorder the text shown after it; what it
    /// held stays readable. A backslash of the text itself is left as it is: the table is for
    /// reading, and `--json` gives the exact value.
    static func printable(_ text: String) -> String {
        guard text.unicodeScalars.contains(where: isSteering) else { return text }
        var clean = ""
        for scalar in text.unicodeScalars {
            if isSteering(scalar) {
                clean += "\\u{" + String(scalar.value, radix: 16, uppercase: true) + "}"
            } else {
                clean.unicodeScalars.append(scalar)
            }
        }
        return clean
    }

    private static func isSteering(_ scalar: Unicode.Scalar) -> Bool {
        scalar.value < 0x20 || (0x7F...0x9F).contains(scalar.value) || scalar.properties.isBidiControl
    }
}
