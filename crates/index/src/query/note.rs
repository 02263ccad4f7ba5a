//! [`QueryNote`]: what the analyzer did to a query word, when it did more than lowercase it.

use std::fmt;

use crate::analyzer::{is_english_stop_word, Analyzer, Stemming, StopWords};

/// The most characters of a word or a term a note prints; longer ones end in `…`.
const SHOWN_CHARS: usize = 40;

/// The most terms of a split word a note lists; the others are counted.
const SHOWN_TERMS: usize = 5;

/// A query word that the analyzer did more to than lowercase: it dropped the word, split it
/// into several terms, or searched it as a term that is not the word itself (`c++` as `c`).
///
/// [`parse_query_with_notes`](super::parse_query_with_notes) returns one note per such word,
/// so that a caller can tell the person who typed the query what was searched. A note is
/// information, not an error: the query runs as parsed.
///
/// ```
/// use apcache_index::analyzer::Analyzer;
/// use apcache_index::query::{parse_query_with_notes, DefaultOperator};
///
/// let (query, notes) =
///     parse_query_with_notes("C++ wi-fi", &Analyzer::default(), DefaultOperator::Or)?;
/// assert_eq!(query.to_string(), "c wi fi");
/// assert_eq!(notes[0].to_string(), r#""C++" was searched as "c": the analyzer drops "+""#);
/// assert_eq!(notes[1].to_string(), r#""wi-fi" was split into "wi" and "fi""#);
/// # Ok::<(), apcache_index::query::QueryError>(())
/// ```
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct QueryNote {
    /// The word as written in the query, escapes resolved (for quoted text, what is between
    /// the quotes).
    pub word: String,
    /// The terms the query searches for it, in order; empty when the word was dropped.
    pub terms: Vec<String>,
    /// The characters of the word that are in none of its terms, such as `+` in `c++`,
    /// whitespace left out, each listed once in the order they first appear.
    pub dropped_characters: Vec<char>,
    /// The words of it that the analyzer dropped as stop words, each listed once.
    pub dropped_stop_words: Vec<String>,
    /// Whether the analyzer stemmed what it kept of the word.
    pub stemmed: bool,
}

impl QueryNote {
    /// The note for `word`, which `analyzer` turned into `terms`; `None` when the terms are
    /// just the word lowercased.
    pub(super) fn for_word(word: &str, terms: &[String], analyzer: &Analyzer) -> Option<Self> {
        let lowercased = lowercase(word);
        if let [term] = terms {
            if *term == lowercased {
                return None;
            }
        }
        let config = analyzer.config();
        // The word's tokens before stop words and stemming.
        let tokens = Analyzer::default().tokens(word);

        let mut kept = tokens.iter().flat_map(|token| token.chars()).peekable();
        let mut dropped_characters = Vec::new();
        for character in lowercased.chars() {
            if kept.peek() == Some(&character) {
                kept.next();
            } else if !character.is_whitespace() && !dropped_characters.contains(&character) {
                dropped_characters.push(character);
            }
        }
        if kept.peek().is_some() {
            // The tokens are not a selection of the word's characters: say nothing of them.
            dropped_characters.clear();
        }

        let is_stop_word =
            |token: &str| config.stop_words == StopWords::English && is_english_stop_word(token);
        let mut dropped_stop_words: Vec<String> = Vec::new();
        for token in tokens.iter().filter(|token| is_stop_word(token)) {
            if !dropped_stop_words.contains(token) {
                dropped_stop_words.push(token.clone());
            }
        }
        let stemmed = config.stemming != Stemming::None
            && !tokens
                .iter()
                .filter(|token| !is_stop_word(token))
                .eq(terms.iter());

        Some(QueryNote {
            word: word.to_owned(),
            terms: terms.to_vec(),
            dropped_characters,
            dropped_stop_words,
            stemmed,
        })
    }

    /// What the analyzer did, as `the analyzer drops "+" and stems it`; `None` when it is not
    /// known.
    fn reason(&self) -> Option<String> {
        let mut dropped: Vec<String> = self
            .dropped_characters
            .iter()
            .map(|character| Shown(&character.to_string()).to_string())
            .collect();
        match self.dropped_stop_words.as_slice() {
            [] => {}
            [stop_word] => dropped.push(format!("the stop word {}", Shown(stop_word))),
            stop_words => dropped.push(format!(
                "the stop words {}",
                list(stop_words.iter().map(|word| Shown(word).to_string()))
            )),
        }
        let mut parts = Vec::new();
        if !dropped.is_empty() {
            parts.push(format!("drops {}", list(dropped)));
        }
        if self.stemmed {
            parts.push("stems it".to_owned());
        }
        match parts.as_slice() {
            [] => None,
            [part] => Some(format!("the analyzer {part}")),
            [first, second] if first.contains(" and ") => {
                Some(format!("the analyzer {first}, and {second}"))
            }
            _ => Some(format!("the analyzer {}", parts.join(" and "))),
        }
    }
}

impl fmt::Display for QueryNote {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let word = Shown(&self.word);
        match self.terms.as_slice() {
            [] => {
                write!(f, "{word} was dropped: ")?;
                let lowercased = lowercase(&self.word);
                match self.dropped_stop_words.as_slice() {
                    [stop_word] if *stop_word == lowercased => f.write_str("it is a stop word"),
                    [] => f.write_str("the analyzer keeps no term of it"),
                    _ => f.write_str(&self.reason().unwrap_or_default()),
                }
            }
            [term] => {
                write!(f, "{word} was searched as {}", Shown(term))?;
                match self.reason() {
                    Some(reason) => write!(f, ": {reason}"),
                    None => Ok(()),
                }
            }
            terms => {
                let mut shown: Vec<String> = terms
                    .iter()
                    .take(SHOWN_TERMS)
                    .map(|term| Shown(term).to_string())
                    .collect();
                if terms.len() > SHOWN_TERMS {
                    shown.push(format!("{} more", terms.len() - SHOWN_TERMS));
                }
                write!(f, "{word} was split into {}", list(shown))
            }
        }
    }
}

/// `word` lowercased as the analyzer does it: each character takes its simple mapping.
fn lowercase(word: &str) -> String {
    word.chars()
        .map(|character| character.to_lowercase().next().unwrap_or(character))
        .collect()
}

/// `"a"`, `"a" and "b"`, `"a", "b" and "c"`.
fn list(items: impl IntoIterator<Item = String>) -> String {
    let mut items: Vec<String> = items.into_iter().collect();
    match items.len() {
        0 | 1 => items.pop().unwrap_or_default(),
        _ => {
            let last = items.pop().unwrap_or_default();
            format!("{} and {last}", items.join(", "))
        }
    }
}

/// A word or term in double quotes, escaped like a Rust string and cut after
/// [`SHOWN_CHARS`] characters.
struct Shown<'a>(&'a str);

impl fmt::Display for Shown<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let shown = match self.0.char_indices().nth(SHOWN_CHARS) {
            Some((end, _)) => &self.0[..end],
            None => self.0,
        };
        let quoted = format!("{shown:?}");
        if shown.len() == self.0.len() {
            return f.write_str(&quoted);
        }
        // Put the ellipsis inside the closing quote.
        write!(f, "{}…\"", &quoted[..quoted.len() - 1])
    }
}
