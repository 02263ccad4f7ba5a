//! UAX #29 word segmentation restricted to ASCII text: the fast path of the tokenizer.
//!
//! On ASCII input the word-boundary rules reduce to a few byte tests. A word starts at a letter,
//! digit or underscore and runs on over letters, digits and underscores (WB5, WB8-WB10,
//! WB13a-b). It also runs on across one separator when the bytes on both sides qualify:
//! `:`, `.` or `'` between two letters (WB6-WB7: "u.s.a", "don't"), and `,`, `;`, `.` or `'`
//! between two digits (WB11-WB12: "3.14", "1,000"). Everything else is a boundary, and no
//! segment outside a word contains a letter or digit, so the words are exactly the segments
//! the Unicode tokenizer keeps. A property test in [`super::tokenizer`] checks this against the
//! general segmenter, and one here checks the block scanner against a byte-at-a-time one.

use super::byte_classes::{BlockClasses, Classifier, BLOCK};

/// Calls `emit` with each word of `text` that contains a letter or digit, in order, and whether
/// the word holds a capital letter (`A-Z`).
///
/// `text` should be ASCII. Other text is never split inside a character, but a non-ASCII
/// character simply ends a word, which is not what UAX #29 says.
///
/// The text is read a block of 64 bytes at a time: `classifier` turns a block into bit masks
/// of the word rules' classes, the separators that join are found with shifts of those masks,
/// and the words are the runs of set bits, found with `trailing_zeros`. A run that reaches the
/// end of a block carries on into the next.
pub(super) fn for_each_ascii_word<'t>(
    text: &'t str,
    classifier: Classifier,
    mut emit: impl FnMut(&'t str, bool),
) {
    let bytes = text.as_bytes();
    let block_count = bytes.len().div_ceil(BLOCK);
    let classify = |block: usize| {
        let start = block * BLOCK;
        match bytes.get(start..start + BLOCK) {
            Some(whole) => classifier.classify(whole.try_into().expect("a block's length")),
            None => {
                // The last, partial block, padded with zeros: a byte of no class.
                let mut padded = [0u8; BLOCK];
                let tail = bytes.get(start..).unwrap_or_default();
                padded[..tail.len()].copy_from_slice(tail);
                classifier.classify(&padded)
            }
        }
    };
    let mut word = OpenWord::default();
    // Whether the last byte of the block before was a letter, or a digit.
    let (mut letter_before, mut digit_before) = (0u64, 0u64);
    let mut next = if block_count > 0 { classify(0) } else { return };
    for block in 0..block_count {
        let classes = next;
        next = if block + 1 < block_count {
            classify(block + 1)
        } else {
            BlockClasses::default()
        };
        // Each byte's neighbours' classes, across the blocks' edges.
        let letter_left = classes.letters << 1 | letter_before;
        let letter_right = classes.letters >> 1 | next.letters << 63;
        let digit_left = classes.digits << 1 | digit_before;
        let digit_right = classes.digits >> 1 | next.digits << 63;
        letter_before = classes.letters >> 63;
        digit_before = classes.digits >> 63;
        let joiners = (classes.letter_joiners & letter_left & letter_right)
            | (classes.digit_joiners & digit_left & digit_right);
        let alphanumeric = classes.letters | classes.digits;
        let mut rest = alphanumeric | classes.underscores | joiners;
        let base = block * BLOCK;
        while rest != 0 || word.is_open() {
            // Where the next run starts: at bit 0 for a word carried over from the block before.
            let start = if word.is_open() {
                0
            } else {
                rest.trailing_zeros()
            };
            let length = (!(rest >> start)).trailing_zeros();
            let end = start + length;
            let run = below(end) & !below(start);
            if !word.is_open() {
                word.start = Some(base + start as usize);
            }
            word.alphanumeric |= alphanumeric & run != 0;
            word.capitals |= classes.capitals & run != 0;
            if end as usize == BLOCK {
                break;
            }
            word.finish(text, base + end as usize, &mut emit);
            rest &= !below(end);
        }
    }
    word.finish(text, bytes.len(), &mut emit);
}

/// The bits below bit `n`, for `n` up to 64.
fn below(n: u32) -> u64 {
    if n >= 64 {
        u64::MAX
    } else {
        (1 << n) - 1
    }
}

/// A word that has started and not yet ended, perhaps in an earlier block.
#[derive(Default)]
struct OpenWord {
    start: Option<usize>,
    alphanumeric: bool,
    capitals: bool,
}

impl OpenWord {
    fn is_open(&self) -> bool {
        self.start.is_some()
    }

    /// Ends the word at byte `end`, emitting it if it holds a letter or digit (a run of
    /// underscores alone is a word segment without one), and starts afresh.
    fn finish<'t>(&mut self, text: &'t str, end: usize, emit: &mut impl FnMut(&'t str, bool)) {
        if let Some(start) = self.start {
            if self.alphanumeric {
                // `start` is at an ASCII byte and `end` is at the end or right after an ASCII
                // byte, so both are character boundaries.
                emit(&text[start..end], self.capitals);
            }
        }
        *self = OpenWord::default();
    }
}

#[cfg(test)]
mod tests {
    use proptest::prelude::*;

    use super::super::byte_classes::tests::classifiers;
    use super::*;

    /// The reference: the same rules, a byte at a time.
    fn ascii_words_bytewise(text: &str) -> Vec<(&str, bool)> {
        let bytes = text.as_bytes();
        let mut words = Vec::new();
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
            if has_alphanumeric {
                let word = &text[start..i];
                words.push((word, word.bytes().any(|byte| byte.is_ascii_uppercase())));
            }
        }
        words
    }

    /// Letters, digits and `_` (ALetter, Numeric and ExtendNumLet).
    fn is_word_byte(byte: u8) -> bool {
        byte.is_ascii_alphanumeric() || byte == b'_'
    }

    /// Whether `separator`, between `before` and `after`, stays inside a word.
    fn joins(before: u8, separator: u8, after: u8) -> bool {
        let letters = before.is_ascii_alphabetic() && after.is_ascii_alphabetic();
        let digits = before.is_ascii_digit() && after.is_ascii_digit();
        match separator {
            // MidLetter (`:`) between letters: WB6, WB7.
            b':' => letters,
            // MidNumLetQ between letters or between digits: WB6, WB7, WB11, WB12.
            b'.' | b'\'' => letters || digits,
            // MidNum between digits: WB11, WB12.
            b',' | b';' => digits,
            _ => false,
        }
    }

    fn scanned(text: &str, classifier: Classifier) -> Vec<(&str, bool)> {
        let mut words = Vec::new();
        for_each_ascii_word(text, classifier, |word, capitals| {
            words.push((word, capitals))
        });
        words
    }

    /// The words, by every classifier, checked to agree with each other and the reference.
    fn words(text: &str) -> Vec<&str> {
        let want = ascii_words_bytewise(text);
        for classifier in classifiers() {
            assert_eq!(
                scanned(text, classifier),
                want,
                "{classifier:?} on {text:?}"
            );
        }
        want.into_iter().map(|(word, _)| word).collect()
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

    #[test]
    fn capitals_are_reported_per_word() {
        let text = "lower Upper mIxed 123 A_1 x";
        let want = [
            ("lower", false),
            ("Upper", true),
            ("mIxed", true),
            ("123", false),
            ("A_1", true),
            ("x", false),
        ];
        for classifier in classifiers() {
            assert_eq!(scanned(text, classifier), want);
        }
    }

    #[test]
    fn words_and_joins_cross_the_blocks_edges() {
        // Separators as the last byte of a block (bytes 63 and 127), joined to the letter or
        // digit after them.
        let first = format!("{}u.s.a", "x".repeat(60));
        let second = format!("{}3,5", "y".repeat(60));
        let text = format!("{first} {second}");
        assert_eq!(text.as_bytes()[63], b'.');
        assert_eq!(text.as_bytes()[127], b',');
        assert_eq!(words(&text), [first, second]);
        // A word of one block, of two, and of lengths around the edges, alone or spaced.
        for length in [63, 64, 65, 127, 128, 129, 200] {
            let word = "Ab".repeat(length)[..length].to_owned();
            assert_eq!(words(&word), [word.as_str()]);
            let spaced = format!(" {word} _");
            assert_eq!(words(&spaced), [word.as_str()]);
        }
        // Underscores alone across an edge are no word.
        assert!(words(&"_".repeat(130)).is_empty());
    }

    /// ASCII with every class the rules distinguish, weighted towards the separators.
    const ALPHABET: &[u8] = b"abZQ07.',:;_-  \t\n\"(/";

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(2048))]

        /// Texts long enough for words, joins and runs of underscores to cross blocks' edges.
        #[test]
        fn block_scanner_matches_the_bytewise_one(
            text in prop::collection::vec(prop::sample::select(ALPHABET), 0..300)
        ) {
            words(&String::from_utf8(text).unwrap());
        }

        /// Non-ASCII characters end words and are never inside one.
        #[test]
        fn non_ascii_characters_end_words(
            text in prop::collection::vec(
                prop::sample::select(&['a', 'B', '1', '.', ' ', 'é', '中', '_'][..]),
                0..200,
            )
        ) {
            words(&text.into_iter().collect::<String>());
        }
    }
}
