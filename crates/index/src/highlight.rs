//! Highlighting: snippets of a stored text with the words that matched a query marked, as
//! Elasticsearch's `highlight` returns them (`pre_tags`, `post_tags`, `fragment_size`,
//! `number_of_fragments`).
//!
//! The text is analyzed again with the index's analyzer, which gives every term its position
//! and the byte range of the word it came from, so a marked word is exactly a word that was
//! indexed as a query term. A term of the query marks every occurrence; an exact phrase marks
//! only the words of its occurrences (`"new york"` does not mark a lone `new`); a sloppy
//! phrase marks its terms' occurrences. Prohibited clauses mark nothing.
//!
//! Fragments are about `fragment_size` characters around marked words, cut at whitespace;
//! the best ones (most distinct terms, then earliest) are returned in text order.

use std::collections::HashSet;
use std::ops::Range;

use crate::analyzer::Analyzer;
use crate::query::{PhraseQuery, Query};

/// How to cut and mark fragments.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HighlightOptions {
    /// Inserted before a marked word.
    pub pre_tag: String,
    /// Inserted after a marked word.
    pub post_tag: String,
    /// Characters a fragment aims at.
    pub fragment_size: usize,
    /// Fragments to return at most; 0 returns the whole text, marked, as one fragment.
    pub number_of_fragments: usize,
}

impl Default for HighlightOptions {
    /// Elasticsearch's defaults: `<em>`, `</em>`, 100 characters, 5 fragments.
    fn default() -> Self {
        HighlightOptions {
            pre_tag: "<em>".into(),
            post_tag: "</em>".into(),
            fragment_size: 100,
            number_of_fragments: 5,
        }
    }
}

/// What a query marks: single terms, and exact phrases (their terms at their offsets).
#[derive(Debug, Clone, Default)]
pub struct Highlighter {
    terms: HashSet<String>,
    phrases: Vec<PhraseQuery>,
}

impl Highlighter {
    /// The marks of `query`'s clauses that can make a document match (not its prohibited
    /// ones).
    pub fn new(query: &Query) -> Highlighter {
        let mut highlighter = Highlighter::default();
        highlighter.collect(query);
        highlighter
    }

    fn collect(&mut self, query: &Query) {
        match query {
            Query::Term(term) => {
                self.terms.insert(term.clone());
            }
            Query::Phrase(phrase) if phrase.slop == 0 => self.phrases.push(phrase.clone()),
            Query::Phrase(phrase) => {
                self.terms
                    .extend(phrase.terms.iter().map(|(_, term)| term.clone()));
            }
            Query::Bool(b) => {
                for clause in b.must.iter().chain(&b.should) {
                    self.collect(clause);
                }
            }
            Query::Boost(inner, _) => self.collect(inner),
            Query::DisMax(d) => d.queries.iter().for_each(|q| self.collect(q)),
            // Keyword terms of a filter are not words of the text; ranges have none.
            Query::Filter(_) | Query::Range(_) | Query::All => {}
        }
    }

    /// The byte ranges of the words of `text` to mark, in order, not overlapping.
    pub fn marks(&self, text: &str, analyzer: &Analyzer) -> Vec<Range<usize>> {
        let mut tokens: Vec<(u32, Range<usize>, String)> = Vec::new();
        analyzer.for_each_token_with_offsets(text, |position, range, term| {
            tokens.push((position, range, term.to_string()));
        });
        let mut marked = vec![false; tokens.len()];
        for (i, (_, _, term)) in tokens.iter().enumerate() {
            marked[i] |= self.terms.contains(term);
        }
        for phrase in &self.phrases {
            let Some((_, first)) = phrase.terms.first() else {
                continue;
            };
            for (i, (position, _, term)) in tokens.iter().enumerate() {
                if term != first {
                    continue;
                }
                // Each other term at its offset from this one.
                let found: Option<Vec<usize>> = phrase.terms[1..]
                    .iter()
                    .map(|(offset, want)| {
                        let at = position.checked_add(*offset)?;
                        let j = i + tokens[i..].iter().position(|t| t.0 >= at)?;
                        (tokens[j].0 == at && tokens[j].2 == *want).then_some(j)
                    })
                    .collect();
                if let Some(found) = found {
                    marked[i] = true;
                    for j in found {
                        marked[j] = true;
                    }
                }
            }
        }
        tokens
            .into_iter()
            .zip(marked)
            .filter(|(_, marked)| *marked)
            .map(|((_, range, _), _)| range)
            .collect()
    }

    /// The fragments of `text` with marked words, as `options` asks; empty when nothing in
    /// `text` is marked.
    pub fn fragments(
        &self,
        text: &str,
        analyzer: &Analyzer,
        options: &HighlightOptions,
    ) -> Vec<String> {
        let marks = self.marks(text, analyzer);
        if marks.is_empty() {
            return Vec::new();
        }
        if options.number_of_fragments == 0 {
            return vec![mark(text, 0..text.len(), &marks, options)];
        }
        let size = options.fragment_size.max(1);
        let mut candidates: Vec<(usize, Range<usize>)> = Vec::new();
        let mut next = 0;
        let mut previous_end = 0;
        while next < marks.len() {
            // Fragments never overlap: one starts where the one before ended, at the latest.
            let start = word_start(text, back_chars(text, marks[next].start, size / 4))
                .max(previous_end)
                .min(marks[next].start);
            let end = word_end(text, forward_chars(text, start, size)).max(marks[next].end);
            let inside: Vec<&Range<usize>> =
                marks[next..].iter().take_while(|m| m.end <= end).collect();
            let distinct: HashSet<String> = inside
                .iter()
                .map(|m| text[m.start..m.end].to_lowercase())
                .collect();
            next += inside.len().max(1);
            previous_end = end;
            candidates.push((distinct.len(), start..end));
        }
        // The best fragments (most distinct words, then earliest), returned in text order.
        let mut order: Vec<usize> = (0..candidates.len()).collect();
        order.sort_by(|&a, &b| candidates[b].0.cmp(&candidates[a].0).then(a.cmp(&b)));
        order.truncate(options.number_of_fragments);
        order.sort_unstable();
        order
            .into_iter()
            .map(|i| mark(text, candidates[i].1.clone(), &marks, options))
            .collect()
    }
}

/// `text[range]` with every mark inside it wrapped in the tags.
fn mark(
    text: &str,
    range: Range<usize>,
    marks: &[Range<usize>],
    options: &HighlightOptions,
) -> String {
    let mut out = String::with_capacity(range.len() + 16);
    let mut at = range.start;
    for m in marks
        .iter()
        .filter(|m| m.start >= range.start && m.end <= range.end)
    {
        out.push_str(&text[at..m.start]);
        out.push_str(&options.pre_tag);
        out.push_str(&text[m.start..m.end]);
        out.push_str(&options.post_tag);
        at = m.end;
    }
    out.push_str(&text[at..range.end]);
    out.trim().to_string()
}

/// The byte offset `chars` characters before `from` (or 0).
fn back_chars(text: &str, from: usize, chars: usize) -> usize {
    text[..from]
        .char_indices()
        .rev()
        .nth(chars.saturating_sub(1))
        .map_or(0, |(i, _)| i)
}

/// The byte offset `chars` characters after `from` (or the end).
fn forward_chars(text: &str, from: usize, chars: usize) -> usize {
    text[from..]
        .char_indices()
        .nth(chars)
        .map_or(text.len(), |(i, _)| from + i)
}

/// The start of the word `at` is in (after the whitespace before it).
fn word_start(text: &str, at: usize) -> usize {
    text[..at]
        .char_indices()
        .rev()
        .find(|(_, c)| c.is_whitespace())
        .map_or(0, |(i, c)| i + c.len_utf8())
}

/// The end of the word `at` is in (the whitespace after it).
fn word_end(text: &str, at: usize) -> usize {
    text[at..]
        .char_indices()
        .find(|(_, c)| c.is_whitespace())
        .map_or(text.len(), |(i, _)| at + i)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::query::{parse_query, DefaultOperator};

    fn fragments(query: &str, text: &str, options: &HighlightOptions) -> Vec<String> {
        let analyzer = Analyzer::default();
        let query = parse_query(query, &analyzer, DefaultOperator::Or).unwrap();
        Highlighter::new(&query).fragments(text, &analyzer, options)
    }

    #[test]
    fn terms_are_marked_where_the_analyzer_found_them() {
        let whole = HighlightOptions {
            number_of_fragments: 0,
            ..HighlightOptions::default()
        };
        assert_eq!(
            fragments("river -city", "The River Arno, a river; the city.", &whole),
            ["The <em>River</em> Arno, a <em>river</em>; the city."]
        );
        // A phrase marks its occurrences only.
        assert_eq!(
            fragments("\"new york\"", "New shoes in New York, new york", &whole),
            ["New shoes in <em>New</em> <em>York</em>, <em>new</em> <em>york</em>"]
        );
        assert!(fragments("zebra", "no match here", &whole).is_empty());
    }

    #[test]
    fn fragments_are_cut_near_marks_and_chosen_by_distinct_terms() {
        let text = format!(
            "{} alpha {} alpha beta {} beta",
            "x ".repeat(80),
            "y ".repeat(80),
            "z ".repeat(80)
        );
        let options = HighlightOptions {
            fragment_size: 30,
            number_of_fragments: 1,
            pre_tag: "[".into(),
            post_tag: "]".into(),
        };
        let got = fragments("alpha beta", &text, &options);
        assert_eq!(got.len(), 1);
        assert!(got[0].contains("[alpha] [beta]"), "{got:?}");
        assert!(got[0].chars().count() <= 50, "{got:?}");
        let all = fragments(
            "alpha beta",
            &text,
            &HighlightOptions {
                number_of_fragments: 5,
                ..options
            },
        );
        assert_eq!(all.len(), 3, "{all:?}");
        assert!(
            all[0].contains("[alpha]") && all[2].contains("[beta]"),
            "{all:?}"
        );
    }

    #[test]
    fn multibyte_text_is_cut_on_character_boundaries() {
        let text = "ééé ".repeat(50) + "Zürich " + &"ü ".repeat(50);
        let options = HighlightOptions {
            fragment_size: 7,
            ..HighlightOptions::default()
        };
        let got = fragments("zürich", &text, &options);
        assert_eq!(got.len(), 1);
        assert!(got[0].contains("<em>Zürich</em>"), "{got:?}");
    }
}
