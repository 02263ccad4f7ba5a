//! Text analysis: turning a document's text into the terms the index stores.
//!
//! The default [`Analyzer`] reproduces Lucene's `StandardAnalyzer` (9.x): the text is cut into
//! words at Unicode UAX #29 word boundaries, segments without a letter or digit are dropped,
//! words longer than [`MAX_TOKEN_CHARS`] are chopped into pieces of that length, and every word
//! is lowercased. Like Lucene 9's `StandardAnalyzer`, it removes no stop words. Agreeing with
//! Lucene matters because apcache is measured against it: the same query must find the same
//! terms.
//!
//! Two filters can be switched on through [`AnalyzerConfig`]: the English stop set of Lucene's
//! `EnglishAnalyzer` ([`ENGLISH_STOP_WORDS`]) and the Snowball English (Porter2) stemmer.
//! [`Analyzer::english`] switches on both.
//!
//! # Speed
//!
//! Analysis sits on the indexing hot path, so [`Analyzer::for_each_token`] hands each term to a
//! closure instead of allocating it: a term that is already lowercase is a slice of the input,
//! and the others are lowercased into one buffer reused for the whole text. Plain ASCII text,
//! the bulk of English prose, skips the Unicode segmenter: an ASCII scanner that implements the
//! same boundary rules (property-tested against the segmenter) handles every stretch of the text
//! up to the whitespace before a non-ASCII character, and only the stretch around that character
//! goes through the full UAX #29 state machine. The ASCII scanner classifies 64 bytes at a time
//! into bit masks (AVX-512 BW or AVX2 where the CPU has them, `byte_classes.rs`) and finds words
//! as runs of set bits; it also notes whether a word holds a capital, so that lowercasing does
//! not read the word again.
//!
//! # Where apcache and Lucene still differ
//!
//! Like Lucene, apcache keeps emoji and other pictographs (`♭`, `™`) as tokens, drops "other
//! numbers" (`²`, `½`), and keeps runs of Thai, Lao, Khmer and Myanmar letters together as one
//! token (see `word_class.rs`). Still different:
//!
//! - Lucene chops a long token at 255 UTF-16 code units and starts a fresh scan there; apcache
//!   chops at 255 characters. Both agree on ASCII.
//! - The two implement different Unicode versions, so recently added characters may differ.
//! - Lucene's `EnglishAnalyzer` stems with the original Porter algorithm; apcache's stemmer is
//!   Porter2, which differs on some words.

mod ascii_words;
mod byte_classes;
mod config;
mod pipeline;
mod stop_words;
mod tokenizer;
mod word_class;

pub use config::{AnalyzerConfig, Stemming, StopWords};
pub use pipeline::Analyzer;
pub use stop_words::{is_english_stop_word, ENGLISH_STOP_WORDS};
pub use tokenizer::MAX_TOKEN_CHARS;
