//! UAX #29 word segmentation restricted to ASCII text: the fast path of the tokenizer.
//!
//! On ASCII input the word-boundary rules reduce to a few byte tests. A word starts at a letter,
//! digit or underscore and runs on over letters, digits and underscores (WB5, WB8-WB10,
//! WB13a-b). It also runs on across one separator when the bytes on both sides qualify:
//! `:`, `.` or `'` between two letters (WB6-WB7: "u.s.a", "don't"), and `,`, `;`, `.` or `'`
//! between two digits (WB11-WB12: "3.14", "1,000"). Everything else is a boundary, and no
//! segment outside a word contains a letter or digit, so the words are exactly the segments
//! the Unicode tokenizer keeps. A property test in [`super::tokenizer`] checks this against the
//! general segmenter.

/// Calls `emit` with each word of `text` that contains a letter or digit, in order.
///
/// `text` should be ASCII. Other text is never split inside a character, but a non-ASCII
/// character simply ends a word, which is not what UAX #29 says.
pub(super) fn for_each_ascii_word<'t>(text: &'t str, mut emit: impl FnMut(&'t str)) {
    let bytes = text.as_bytes();
    let mut i = 0;
    while i < bytes.len() {
        if !is_word_byte(bytes[i]) {
            i += 1;
            continue;
        }
        let start = i;
        let mut has_alphanumeric = false;
        while i < bytes.len() {
            let byte = bytes[i];
            if is_word_byte(byte) {
                has_alphanumeric |= byte != b'_';
                i += 1;
            } else if i + 1 < bytes.len() && joins(bytes[i - 1], byte, bytes[i + 1]) {
                // The separator and the letter or digit after it.
                has_alphanumeric = true;
                i += 2;
            } else {
                break;
            }
        }
        // A segment of underscores alone is a word segment without a letter or digit.
        if has_alphanumeric {
            // `start` is at an ASCII byte and `i` is at the end or right after an ASCII byte,
            // so both are character boundaries.
            emit(&text[start..i]);
        }
    }
}

/// Letters, digits and `_` (ALetter, Numeric and ExtendNumLet).
fn is_word_byte(byte: u8) -> bool {
    WORD_BYTES[usize::from(byte)]
}

/// [`is_word_byte`] as a table: one load per byte where the tests are several branches.
static WORD_BYTES: [bool; 256] = {
    let mut table = [false; 256];
    let mut byte = 0;
    while byte < 256 {
        let b = byte as u8;
        table[byte] = b.is_ascii_alphanumeric() || b == b'_';
        byte += 1;
    }
    table
};

/// Whether `separator`, between `before` and `after`, stays inside a word.
fn joins(before: u8, separator: u8, after: u8) -> bool {
    match separator {
        // MidLetter (`:`) and MidNumLetQ (`.`, `'`) between letters: WB6, WB7.
        b':' | b'.' | b'\'' if before.is_ascii_alphabetic() && after.is_ascii_alphabetic() => true,
        // MidNum (`,`, `;`) and MidNumLetQ between digits: WB11, WB12.
        b',' | b';' | b'.' | b'\'' if before.is_ascii_digit() && after.is_ascii_digit() => true,
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn words(text: &str) -> Vec<&str> {
        let mut words = Vec::new();
        for_each_ascii_word(text, |word| words.push(word));
        words
    }

    #[test]
    fn separators_stay_inside_words_only_between_the_right_classes() {
        assert_eq!(
            words("3.14 u.s.a don't O'Neil"),
            ["3.14", "u.s.a", "don't", "O'Neil"]
        );
        assert_eq!(words("1,000,000 1;2 a:b"), ["1,000,000", "1;2", "a:b"]);
        assert_eq!(
            words("a,b 1:2 a.1 1.a"),
            ["a", "b", "1", "2", "a", "1", "1", "a"]
        );
        assert_eq!(words("a..b x. .y 'q'"), ["a", "b", "x", "y", "q"]);
    }

    #[test]
    fn underscores_join_but_alone_are_not_a_word() {
        assert_eq!(
            words("foo_bar _x y_ ___ __1"),
            ["foo_bar", "_x", "y_", "__1"]
        );
    }

    #[test]
    fn punctuation_and_whitespace_split() {
        assert_eq!(
            words("wi-fi (x)\t\r\nhttp://a.b/c"),
            ["wi", "fi", "x", "http", "a.b", "c"]
        );
        assert_eq!(words(""), Vec::<&str>::new());
        assert_eq!(words(" .,;:'_ "), Vec::<&str>::new());
    }

    #[test]
    fn a_separator_at_either_end_is_not_part_of_the_word() {
        assert_eq!(words("a."), ["a"]);
        assert_eq!(words(".a"), ["a"]);
        assert_eq!(words("1,"), ["1"]);
    }
}
