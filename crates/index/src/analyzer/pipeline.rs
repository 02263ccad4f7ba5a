//! [`Analyzer`]: tokenizer, lowercasing, stop words and stemmer chained for the indexing hot
//! path.

use std::fmt;

use rust_stemmers::{Algorithm, Stemmer};

use super::config::{AnalyzerConfig, Stemming, StopWords};
use super::stop_words::is_english_stop_word;
use super::tokenizer::{for_each_word, WordCase};

/// Turns text into index terms: UAX #29 words, lowercased, then optionally stop-filtered and
/// stemmed, in the order of Lucene's analyzers.
///
/// An analyzer holds no mutable state, so one instance can be shared by every indexing
/// thread.
///
/// ```
/// use apcache_index::analyzer::Analyzer;
///
/// let terms = Analyzer::default().tokens("The U.S.A. isn't Ελλάδα");
/// assert_eq!(terms, ["the", "u.s.a", "isn't", "ελλάδα"]);
///
/// let terms = Analyzer::english().tokens("The runners are running");
/// assert_eq!(terms, ["runner", "run"]);
/// ```
pub struct Analyzer {
    config: AnalyzerConfig,
    stemmer: Option<Stemmer>,
}

impl Analyzer {
    /// An analyzer with the given options.
    pub fn new(config: AnalyzerConfig) -> Analyzer {
        let stemmer = match config.stemming {
            Stemming::None => None,
            Stemming::SnowballEnglish => Some(Stemmer::create(Algorithm::English)),
        };
        Analyzer { config, stemmer }
    }

    /// English stop words and the Snowball English stemmer.
    pub fn english() -> Analyzer {
        Analyzer::new(AnalyzerConfig {
            stop_words: StopWords::English,
            stemming: Stemming::SnowballEnglish,
        })
    }

    /// The options this analyzer was built with.
    pub fn config(&self) -> AnalyzerConfig {
        self.config
    }

    /// Calls `emit` with each term of `text`, in order.
    ///
    /// The term lives only for the call: it is a slice of `text` when the word is already a
    /// lowercase term, and otherwise a buffer that the next term reuses.
    pub fn for_each_token(&self, text: &str, mut emit: impl FnMut(&str)) {
        self.for_each_token_with_position(text, |_, term| emit(term));
    }

    /// Calls `emit` with each term of `text` and its position, in order.
    ///
    /// Positions count the tokenizer's words from 0, so a removed stop word leaves a gap, as
    /// Lucene's position increments do. They saturate at `u32::MAX`. Returns the number of
    /// words, removed ones included: the position the next text of the same field starts at.
    pub fn for_each_token_with_position(&self, text: &str, mut emit: impl FnMut(u32, &str)) -> u32 {
        self.for_each_token_with_offsets(text, |position, _, term| emit(position, term))
    }

    /// Like [`Analyzer::for_each_token_with_position`], with the byte range in `text` of the
    /// word each term comes from (for highlighting).
    pub fn for_each_token_with_offsets(
        &self,
        text: &str,
        mut emit: impl FnMut(u32, std::ops::Range<usize>, &str),
    ) -> u32 {
        let mut lowercase_buffer = String::new();
        let mut position: u32 = 0;
        let base = text.as_ptr() as usize;
        for_each_word(text, |word, case| {
            let word_position = position;
            position = position.saturating_add(1);
            // Words are slices of `text`.
            let start = word.as_ptr() as usize - base;
            let range = start..start + word.len();
            let term = lowercase(word, case, &mut lowercase_buffer);
            if self.config.stop_words == StopWords::English && is_english_stop_word(term) {
                return;
            }
            match &self.stemmer {
                Some(stemmer) => emit(word_position, range, &stemmer.stem(term)),
                None => emit(word_position, range, term),
            }
        });
        position
    }

    /// The terms of `text`, in order. Allocates every term; the indexer should prefer
    /// [`Analyzer::for_each_token`].
    pub fn tokens(&self, text: &str) -> Vec<String> {
        let mut terms = Vec::new();
        self.for_each_token(text, |term| terms.push(term.to_owned()));
        terms
    }
}

impl Default for Analyzer {
    /// The equivalent of Lucene's `StandardAnalyzer`: no stop words, no stemming.
    fn default() -> Analyzer {
        Analyzer::new(AnalyzerConfig::default())
    }
}

impl Clone for Analyzer {
    fn clone(&self) -> Analyzer {
        Analyzer::new(self.config)
    }
}

impl fmt::Debug for Analyzer {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Analyzer")
            .field("config", &self.config)
            .finish()
    }
}

/// `word` lowercased character by character, as Lucene's `LowerCaseFilter` does: either `word`
/// itself, when it is ASCII without capitals, or `buffer` holding the lowercased copy. `case`
/// is what the tokenizer already knows, so that an ASCII word is not read again.
///
/// Each character takes its simple (one-to-one) lowercase mapping, like Java's
/// `Character.toLowerCase`: `İ` becomes `i` rather than `i` plus a combining dot, and a final
/// `Σ` becomes `σ`, not `ς`.
fn lowercase<'a>(word: &'a str, case: WordCase, buffer: &'a mut String) -> &'a str {
    let case = match case {
        WordCase::Unknown if word.is_ascii() => {
            WordCase::of_ascii(word.bytes().any(|byte| byte.is_ascii_uppercase()))
        }
        known => known,
    };
    if case == WordCase::AsciiLowercase {
        return word;
    }
    if case == WordCase::AsciiCapitalized {
        buffer.clear();
        buffer.push_str(word);
        buffer.make_ascii_lowercase();
    } else {
        buffer.clear();
        // The full lowercase mapping has more than one character only for U+0130, whose simple
        // mapping is the first of them.
        buffer.extend(word.chars().map(|c| c.to_lowercase().next().unwrap_or(c)));
    }
    buffer
}

#[cfg(test)]
mod tests {
    use super::*;

    fn with_stop_words() -> Analyzer {
        Analyzer::new(AnalyzerConfig {
            stop_words: StopWords::English,
            stemming: Stemming::None,
        })
    }

    fn positioned(analyzer: &Analyzer, text: &str) -> Vec<(u32, String)> {
        let mut terms = Vec::new();
        analyzer.for_each_token_with_position(text, |position, term| {
            terms.push((position, term.to_owned()));
        });
        terms
    }

    #[test]
    fn the_default_is_the_standard_analyzer() {
        let analyzer = Analyzer::default();
        assert_eq!(analyzer.config(), AnalyzerConfig::default());
        assert_eq!(
            analyzer.tokens("The Quick-Brown fox, e-mail: FOO@Example.COM"),
            [
                "the",
                "quick",
                "brown",
                "fox",
                "e",
                "mail",
                "foo",
                "example.com"
            ]
        );
    }

    #[test]
    fn lowercasing_uses_the_simple_mapping_like_java() {
        let analyzer = Analyzer::default();
        assert_eq!(
            analyzer.tokens("İSTANBUL ΣΊΣΥΦΟΣ Straße ÉCOLE"),
            ["istanbul", "σίσυφοσ", "straße", "école"]
        );
    }

    #[test]
    fn stop_words_are_dropped_but_keep_their_positions() {
        let terms = positioned(&with_stop_words(), "The fox is in the box, not out");
        let expected = [(1, "fox"), (5, "box"), (7, "out")];
        let expected: Vec<(u32, String)> = expected
            .iter()
            .map(|&(position, term)| (position, term.to_owned()))
            .collect();
        assert_eq!(terms, expected);
    }

    #[test]
    fn stop_words_match_after_lowercasing_only_whole_terms() {
        assert_eq!(
            with_stop_words().tokens("THE Then thereby AN an't"),
            ["thereby", "an't"]
        );
    }

    #[test]
    fn stemming_follows_stop_word_removal() {
        let analyzer = Analyzer::english();
        assert_eq!(
            analyzer.tokens("The Runners were RUNNING easily; it's this fox's"),
            ["runner", "were", "run", "easili", "it", "fox"]
        );
        // "this" is a stop word before stemming; "thi" would not be.
        assert!(analyzer.tokens("this").is_empty());
    }

    #[test]
    fn positions_count_every_word_including_chopped_pieces() {
        let long = "x".repeat(300);
        let terms = positioned(&Analyzer::default(), &format!("a {long} b"));
        let positions: Vec<u32> = terms.iter().map(|(position, _)| *position).collect();
        assert_eq!(positions, [0, 1, 2, 3]);
    }

    #[test]
    fn clones_and_debug_show_the_config() {
        let analyzer = Analyzer::english();
        assert_eq!(analyzer.clone().config(), analyzer.config());
        assert!(format!("{analyzer:?}").contains("SnowballEnglish"));
    }

    #[test]
    fn config_round_trips_through_json() {
        let config = Analyzer::english().config();
        let json = serde_json::to_string(&config).unwrap();
        assert_eq!(
            json,
            r#"{"stop_words":"english","stemming":"snowball-english"}"#
        );
        assert_eq!(
            serde_json::from_str::<AnalyzerConfig>(&json).unwrap(),
            config
        );
    }
}
