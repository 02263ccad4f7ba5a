//! The English stop set of Lucene's `EnglishAnalyzer` (`EnglishAnalyzer.ENGLISH_STOP_WORDS_SET`).

/// The 33 English stop words of Lucene's `EnglishAnalyzer`, sorted.
pub const ENGLISH_STOP_WORDS: [&str; 33] = [
    "a", "an", "and", "are", "as", "at", "be", "but", "by", "for", "if", "in", "into", "is", "it",
    "no", "not", "of", "on", "or", "such", "that", "the", "their", "then", "there", "these",
    "they", "this", "to", "was", "will", "with",
];

/// The longest word of [`ENGLISH_STOP_WORDS`], in bytes: most terms are longer and are rejected
/// without a search.
const LONGEST_STOP_WORD: usize = 5;

/// Whether `term`, already lowercased, is one of [`ENGLISH_STOP_WORDS`].
pub fn is_english_stop_word(term: &str) -> bool {
    term.len() <= LONGEST_STOP_WORD && ENGLISH_STOP_WORDS.binary_search(&term).is_ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_list_is_sorted_and_unique_so_binary_search_finds_every_word() {
        assert!(ENGLISH_STOP_WORDS.windows(2).all(|pair| pair[0] < pair[1]));
        assert!(ENGLISH_STOP_WORDS
            .iter()
            .all(|word| is_english_stop_word(word)));
    }

    #[test]
    fn longest_stop_word_is_the_real_maximum() {
        let longest = ENGLISH_STOP_WORDS.iter().map(|word| word.len()).max();
        assert_eq!(longest, Some(LONGEST_STOP_WORD));
    }

    #[test]
    fn other_words_are_not_stop_words() {
        for word in ["", "the_", "them", "these2", "The", "i", "was.", "thereby"] {
            assert!(!is_english_stop_word(word), "{word:?}");
        }
    }
}
