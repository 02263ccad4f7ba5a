//! A node over documents listed in advance: a range's matches read from a segment's columns,
//! or every document of a segment, each with one constant score.
//!
//! A range over a column has no postings to walk: the column answers it for a whole segment at
//! once (skipping the blocks of documents whose least and greatest values miss it), and the
//! documents it found are then walked like a term's, so that ranges combine with terms in any
//! boolean query.

use super::term_cursor::NO_MORE_DOCS;

/// Listed documents, in increasing order, and the score each gets.
pub struct DocList {
    docs: Vec<u32>,
    at: usize,
    score: f32,
}

impl DocList {
    /// A list of `docs` (increasing global DIDs), each scored `score`.
    pub fn new(docs: Vec<u32>, score: f32) -> DocList {
        debug_assert!(docs.windows(2).all(|w| w[0] < w[1]));
        DocList { docs, at: 0, score }
    }

    /// The current document ([`NO_MORE_DOCS`] past the last).
    pub fn doc(&self) -> u32 {
        self.docs.get(self.at).copied().unwrap_or(NO_MORE_DOCS)
    }

    /// Moves to the first listed document at or after `target`.
    pub fn advance(&mut self, target: u32) -> u32 {
        if self.doc() < target {
            // Galloping: targets are usually near.
            let rest = &self.docs[self.at..];
            let mut bound = 1;
            while bound < rest.len() && rest[bound] < target {
                bound *= 2;
            }
            let window = &rest[bound / 2..rest.len().min(bound + 1)];
            self.at += bound / 2 + window.partition_point(|&d| d < target);
        }
        self.doc()
    }

    /// How many documents are listed.
    pub fn len(&self) -> u64 {
        self.docs.len() as u64
    }

    /// The score of every listed document.
    pub fn score(&self) -> f32 {
        self.score
    }
}

#[cfg(test)]
mod tests {
    use proptest::prelude::*;

    use super::*;

    proptest! {
        #[test]
        fn advance_finds_the_first_listed_document_at_or_after_the_target(
            docs in proptest::collection::btree_set(0u32..5000, 0..300),
            mut targets in proptest::collection::vec(0u32..5200, 0..40),
        ) {
            let docs: Vec<u32> = docs.into_iter().collect();
            let mut list = DocList::new(docs.clone(), 1.0);
            targets.sort_unstable();
            for target in targets {
                let expected = docs.iter().copied().find(|&d| d >= target).unwrap_or(NO_MORE_DOCS);
                prop_assert_eq!(list.advance(target), expected);
            }
        }
    }
}
