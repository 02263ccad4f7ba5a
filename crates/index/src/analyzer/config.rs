//! The options of an [`Analyzer`](super::Analyzer), kept apart from it so that an index can
//! record how its terms were made and analyze queries the same way.

use serde::{Deserialize, Serialize};

/// What an [`Analyzer`](super::Analyzer) does after tokenizing and lowercasing.
///
/// The default is Lucene's `StandardAnalyzer`: no stop words, no stemming.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct AnalyzerConfig {
    /// Which words to drop.
    pub stop_words: StopWords,
    /// Which stemmer to apply to the words that are kept.
    pub stemming: Stemming,
}

/// A stop-word set.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum StopWords {
    /// Keep every word (Lucene 9's `StandardAnalyzer`).
    #[default]
    None,
    /// Drop the 33 words of Lucene's `EnglishAnalyzer`, [`ENGLISH_STOP_WORDS`].
    ///
    /// A dropped word still takes a position, so phrase queries do not match across it.
    ///
    /// [`ENGLISH_STOP_WORDS`]: super::ENGLISH_STOP_WORDS
    English,
}

/// A stemmer.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Stemming {
    /// Index words as they are.
    #[default]
    None,
    /// The Snowball English stemmer, also known as Porter2 (Lucene's
    /// `SnowballFilter(new EnglishStemmer())`). Lucene's `EnglishAnalyzer` uses the original
    /// Porter stemmer instead; the two differ on some words.
    SnowballEnglish,
}
