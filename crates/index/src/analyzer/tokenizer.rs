//! The equivalent of Lucene's `StandardTokenizer`: UAX #29 words that contain a letter or digit,
//! chopped at [`MAX_TOKEN_CHARS`].
//!
//! The Unicode segmenter is exact but slow, and most of an English document is ASCII. So the
//! text is cut at *safe points*, where the segmenter is known to break and to forget what came
//! before: right after ASCII whitespace and right before an ASCII character that is not
//! whitespace. No UAX #29 rule joins whitespace to such a character (WB3d joins spaces only to
//! spaces, WB4 attaches only non-ASCII Extend, Format and ZWJ characters) and no rule looks
//! back or ahead through whitespace, so segmenting the pieces separately gives the same
//! segments as segmenting the whole text. Pieces without a non-ASCII byte go through
//! [`for_each_ascii_word`]; the piece around each non-ASCII character, from the last safe point
//! before it to the first one after it, goes through the Unicode segmenter.

use apcache_codec::Isa;
use unicode_segmentation::UnicodeSegmentation;

use super::ascii_words::for_each_ascii_word;
use super::byte_classes::Classifier;
use super::word_class;

/// The longest token, in characters; longer words are chopped into pieces of this length, as
/// Lucene's `StandardTokenizer` does with its default `maxTokenLength` of 255.
pub const MAX_TOKEN_CHARS: usize = 255;

/// What the tokenizer learnt of a word's case while finding it, so that lowercasing need not
/// read the word again.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum WordCase {
    /// ASCII without a capital: already its own lowercase.
    AsciiLowercase,
    /// ASCII with at least one capital.
    AsciiCapitalized,
    /// Not known (a word from the Unicode segmenter).
    Unknown,
}

impl WordCase {
    /// The case of an ASCII word, which holds a capital or not.
    pub(super) fn of_ascii(capitals: bool) -> WordCase {
        if capitals {
            WordCase::AsciiCapitalized
        } else {
            WordCase::AsciiLowercase
        }
    }
}

/// Calls `emit` with each token of `text`, in order, as a slice of `text` (not lowercased),
/// with what is known of its case.
pub(super) fn for_each_word<'t>(text: &'t str, mut emit: impl FnMut(&'t str, WordCase)) {
    let classifier = Classifier::for_isa(Isa::detect());
    let bytes = text.as_bytes();
    let mut pos = 0;
    while pos < bytes.len() {
        let Some(offset) = first_non_ascii(&bytes[pos..]) else {
            for_each_ascii_word(&text[pos..], classifier, |word, capitals| {
                emit_chopped(word, WordCase::of_ascii(capitals), &mut emit)
            });
            return;
        };
        let non_ascii = pos + offset;
        let start = (pos + 1..non_ascii)
            .rev()
            .find(|&i| is_safe_point(bytes, i))
            .unwrap_or(pos);
        let end = (non_ascii + 1..bytes.len())
            .find(|&i| is_safe_point(bytes, i))
            .unwrap_or(bytes.len());
        // `start` and `end` are each 0, the end, or the index of an ASCII byte, so they are
        // character boundaries.
        for_each_ascii_word(&text[pos..start], classifier, |word, capitals| {
            emit_chopped(word, WordCase::of_ascii(capitals), &mut emit)
        });
        for_each_unicode_word(&text[start..end], &mut |word| {
            emit_chopped(word, WordCase::Unknown, &mut emit)
        });
        pos = end;
    }
}

/// The index of the first byte of `bytes` outside ASCII, testing eight bytes at a time.
fn first_non_ascii(bytes: &[u8]) -> Option<usize> {
    const HIGH_BITS: u64 = 0x8080_8080_8080_8080;
    let mut words = bytes.chunks_exact(8);
    let mut at = 0;
    for word in &mut words {
        let high = u64::from_le_bytes(word.try_into().expect("eight bytes")) & HIGH_BITS;
        if high != 0 {
            return Some(at + high.trailing_zeros() as usize / 8);
        }
        at += 8;
    }
    let tail = words.remainder().iter().position(|byte| !byte.is_ascii())?;
    Some(at + tail)
}

/// The tokens of `text` by the full UAX #29 segmenter, kept as Lucene keeps them
/// ([`word_class`]): runs of South-East Asian segments join into one token.
fn for_each_unicode_word<'t>(text: &'t str, emit: &mut impl FnMut(&'t str)) {
    // A pending run of South-East Asian segments: its byte range in `text`.
    let mut run: Option<(usize, usize)> = None;
    let mut at = 0;
    for segment in text.split_word_bounds() {
        let start = at;
        at += segment.len();
        if segment.chars().all(word_class::is_southeast_asian) {
            run = Some(run.map_or((start, at), |(s, _)| (s, at)));
            continue;
        }
        if let Some((s, e)) = run.take() {
            emit(&text[s..e]);
        }
        if word_class::is_token(segment) {
            emit(segment);
        }
    }
    if let Some((s, e)) = run {
        emit(&text[s..e]);
    }
}

/// Whether the segmenter breaks before `bytes[i]` and its rules never look across that break;
/// `i` must be in `1..bytes.len()`.
fn is_safe_point(bytes: &[u8], i: usize) -> bool {
    let (before, at) = (bytes[i - 1], bytes[i]);
    before.is_ascii_whitespace() && at.is_ascii() && !at.is_ascii_whitespace()
}

/// Emits `word`, or its consecutive pieces of [`MAX_TOKEN_CHARS`] characters if it is longer
/// (each with the whole word's `case`: a piece of a capitalized word may have no capital, and
/// lowercasing it changes nothing).
fn emit_chopped<'t>(word: &'t str, case: WordCase, emit: &mut impl FnMut(&'t str, WordCase)) {
    // A string is never longer in characters than in bytes.
    if word.len() <= MAX_TOKEN_CHARS {
        emit(word, case);
        return;
    }
    let mut rest = word;
    while !rest.is_empty() {
        let cut = rest
            .char_indices()
            .nth(MAX_TOKEN_CHARS)
            .map_or(rest.len(), |(index, _)| index);
        let (piece, tail) = rest.split_at(cut);
        emit(piece, case);
        rest = tail;
    }
}

#[cfg(test)]
mod tests {
    use proptest::prelude::*;

    use super::*;

    fn words(text: &str) -> Vec<&str> {
        let mut words = Vec::new();
        for_each_word(text, |word, case| {
            // Lowercasing trusts this hint to skip a word; a capitalized word's chopped
            // pieces may be marked capitalized without a capital, which costs only a copy.
            if case == WordCase::AsciiLowercase {
                assert!(
                    !word.bytes().any(|byte| byte.is_ascii_uppercase()),
                    "{word:?}"
                );
            }
            words.push(word)
        });
        words
    }

    /// The definition: the UAX #29 segments Lucene keeps (South-East Asian runs joined),
    /// computed by the general segmenter on the whole text, without the ASCII shortcut.
    fn reference_words(text: &str) -> Vec<&str> {
        let mut words = Vec::new();
        for_each_unicode_word(text, &mut |w| words.push(w));
        words
    }

    fn ascii_words(text: &str) -> Vec<&str> {
        let mut words = Vec::new();
        let classifier = Classifier::for_isa(Isa::detect());
        for_each_ascii_word(text, classifier, |word, _| words.push(word));
        words
    }

    /// ASCII with every character class the word rules distinguish, weighted towards the
    /// separators so that the interesting combinations are frequent.
    const ASCII_ALPHABET: &[char] = &[
        'a', 'b', 'Z', '0', '7', '.', '\'', ',', ':', ';', '_', '-', ' ', ' ', '\t', '\n', '\r',
        '"', '(', '/', '@', '#', '\u{b}', '\u{c}',
    ];

    /// ASCII plus characters that exercise the Unicode rules around a safe point: letters,
    /// combining and spacing marks (Extend, some of them alphabetic), Format (soft hyphen), ZWJ,
    /// non-ASCII spaces, ideographs, kana, Hebrew letters with `"`, regional indicators, emoji,
    /// Thai, a superscript digit and a full-width digit.
    const MIXED_ALPHABET: &[char] = &[
        'a',
        'Z',
        '3',
        '.',
        '\'',
        ',',
        ':',
        '_',
        ' ',
        '\t',
        '\n',
        '\r',
        '"',
        '-',
        'é',
        'É',
        'ß',
        'İ',
        'Σ',
        '\u{301}',
        '\u{903}',
        '\u{ad}',
        '\u{200d}',
        '\u{a0}',
        '\u{3000}',
        '\u{2028}',
        '中',
        '文',
        'ひ',
        'カ',
        'ナ',
        'א',
        'ב',
        '\u{1f1fa}',
        '\u{1f1f8}',
        '\u{1f44d}',
        'ก',
        '²',
        '１',
        '\u{85}',
    ];

    fn text_over(alphabet: &'static [char]) -> impl Strategy<Value = String> {
        proptest::collection::vec(proptest::sample::select(alphabet), 0..48)
            .prop_map(|chars| chars.into_iter().collect())
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(4096))]

        #[test]
        fn ascii_scanner_matches_the_unicode_segmenter(text in text_over(ASCII_ALPHABET)) {
            prop_assert_eq!(ascii_words(&text), reference_words(&text));
        }

        #[test]
        fn cutting_at_safe_points_matches_the_unicode_segmenter(
            text in text_over(MIXED_ALPHABET)
        ) {
            prop_assert_eq!(words(&text), reference_words(&text));
        }
    }

    #[test]
    fn the_first_byte_outside_ascii_is_found_in_any_lane() {
        for length in 0..40 {
            let ascii = "a".repeat(length);
            assert_eq!(first_non_ascii(ascii.as_bytes()), None);
            for at in 0..length {
                let mut bytes = ascii.clone().into_bytes();
                bytes[at] = 0xC3;
                bytes[length - 1] = 0x80;
                assert_eq!(first_non_ascii(&bytes), Some(at));
            }
        }
    }

    #[test]
    fn lucene_keeps_numbers_abbreviations_and_contractions_whole() {
        assert_eq!(
            words("Pi is 3.14, not 3,14; the U.S.A. don't O'Neil's"),
            ["Pi", "is", "3.14", "not", "3,14", "the", "U.S.A", "don't", "O'Neil's"]
        );
    }

    #[test]
    fn ascii_and_unicode_stretches_join_up() {
        assert_eq!(
            words("The café in Zürich costs 3,50 € — naïve"),
            ["The", "café", "in", "Zürich", "costs", "3,50", "naïve"]
        );
        assert_eq!(words("中文 text 日本"), ["中", "文", "text", "日", "本"]);
        assert_eq!(
            words("カタカナ ひらがな"),
            ["カタカナ", "ひ", "ら", "が", "な"]
        );
    }

    #[test]
    fn a_mark_after_a_space_belongs_to_the_space() {
        // WB4 attaches the combining acute accent to the space before it.
        assert_eq!(words("ab \u{301}cd"), ["ab", "cd"]);
        assert_eq!(words("ab \u{301}cd"), reference_words("ab \u{301}cd"));
    }

    #[test]
    fn long_words_are_chopped_at_255_characters() {
        let ascii = "a".repeat(600);
        let lengths: Vec<usize> = words(&ascii).iter().map(|word| word.len()).collect();
        assert_eq!(lengths, [255, 255, 90]);

        let accented = "é".repeat(300);
        let lengths: Vec<usize> = words(&accented)
            .iter()
            .map(|word| word.chars().count())
            .collect();
        assert_eq!(lengths, [255, 45]);

        let exact = "b".repeat(255);
        assert_eq!(words(&exact), [exact.as_str()]);
    }

    #[test]
    fn text_without_words_has_no_tokens() {
        assert!(words("").is_empty());
        assert!(words(" -- ... \u{b2} \u{3000}").is_empty());
        // Lucene keeps emoji and other pictographs as tokens.
        assert_eq!(
            words("ok \u{1f44d} \u{266d}"),
            ["ok", "\u{1f44d}", "\u{266d}"]
        );
        // and runs of Thai letters as one token.
        assert_eq!(words("ภาษาไทย test"), ["ภาษาไทย", "test"]);
    }
}
