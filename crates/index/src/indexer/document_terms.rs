//! The terms of one document, gathered before they reach the posting table.
//!
//! A document of a few hundred tokens holds far fewer distinct terms (on Wikipedia text a term
//! occurs about 2.5 times per document that has it), and the posting table is far larger than
//! the caches: probing it costs a cache miss or two. So the tokens of a document are counted
//! first in this small table, which stays in the first-level caches, and the posting table is
//! probed once per distinct term with the term's frequency and positions ready, its hash
//! computed once.

use std::hash::Hasher;

use hashbrown::HashTable;
use rustc_hash::FxHasher;

/// The hash of a term, shared by this table and the posting table.
pub(super) fn hash_term(term: &[u8]) -> u64 {
    let mut hasher = FxHasher::default();
    hasher.write(term);
    hasher.finish()
}

/// Entries each buffer keeps between documents (a few hundred KiB in all).
const KEPT_ENTRIES: usize = 1 << 14;

/// A distinct term of the document.
#[derive(Debug, Clone, Copy)]
struct DocumentTerm {
    hash: u64,
    /// Where its bytes start in [`DocumentTerms::text`], and their length.
    start: u32,
    len: u32,
    /// Occurrences in the document.
    freq: u32,
    /// Where its positions start in [`DocumentTerms::grouped`] once grouped.
    first: u32,
}

/// The distinct terms of one document, with their frequencies and, when kept, positions.
#[derive(Default)]
pub(super) struct DocumentTerms {
    /// Indexes into `terms`, by hash.
    table: HashTable<u32>,
    /// The distinct terms, in the order of their first occurrence.
    terms: Vec<DocumentTerm>,
    /// The distinct terms' bytes, one after another.
    text: Vec<u8>,
    /// Each occurrence's term (index into `terms`) and position, in document order.
    occurrences: Vec<(u32, u32)>,
    /// The positions grouped by term: `terms[i]`'s are `grouped[first..first + freq]`, in
    /// increasing order.
    grouped: Vec<u32>,
    /// Whether `grouped` holds the occurrences added so far.
    is_grouped: bool,
    keep_positions: bool,
}

/// A distinct term of a document, as [`DocumentTerms::for_each`] hands it out.
pub(super) struct TermOccurrences<'a> {
    /// The term's bytes (UTF-8: a token's).
    pub term: &'a [u8],
    pub hash: u64,
    pub freq: u32,
    /// Its positions in increasing order (empty when positions are not kept).
    pub positions: &'a [u32],
}

impl DocumentTerms {
    /// An empty table; `keep_positions` says whether positions are gathered.
    pub(super) fn new(keep_positions: bool) -> DocumentTerms {
        DocumentTerms {
            keep_positions,
            ..DocumentTerms::default()
        }
    }

    /// Forgets the last document, keeping the memory of a document of ordinary length (an
    /// outsized one's is given back).
    pub(super) fn clear(&mut self) {
        self.table.clear();
        // Empty: nothing to rehash.
        self.table.shrink_to(KEPT_ENTRIES, |_| 0);
        self.terms.clear();
        self.terms.shrink_to(KEPT_ENTRIES);
        self.text.clear();
        self.text.shrink_to(KEPT_ENTRIES * 8);
        self.occurrences.clear();
        self.occurrences.shrink_to(KEPT_ENTRIES);
        self.grouped.clear();
        self.grouped.shrink_to(KEPT_ENTRIES);
        self.is_grouped = false;
    }

    /// Distinct terms.
    pub(super) fn len(&self) -> usize {
        self.terms.len()
    }

    /// Counts one occurrence of `token` at `position` (positions come in increasing order).
    pub(super) fn add(&mut self, token: &str, position: u32) {
        let bytes = token.as_bytes();
        let hash = hash_term(bytes);
        let DocumentTerms {
            table, terms, text, ..
        } = self;
        let found = table.find(hash, |&i| {
            let t = &terms[i as usize];
            t.hash == hash && &text[t.start as usize..(t.start + t.len) as usize] == bytes
        });
        let index = match found {
            Some(&i) => {
                terms[i as usize].freq += 1;
                i
            }
            None => {
                let i = terms.len() as u32;
                terms.push(DocumentTerm {
                    hash,
                    start: text.len() as u32,
                    len: bytes.len() as u32,
                    freq: 1,
                    first: 0,
                });
                text.extend_from_slice(bytes);
                table.insert_unique(hash, i, |&i| terms[i as usize].hash);
                i
            }
        };
        if self.keep_positions {
            self.occurrences.push((index, position));
            self.is_grouped = false;
        }
    }

    /// Calls `visit` with each distinct term, in the order of first occurrence, stopping at the
    /// first error.
    pub(super) fn for_each<E>(
        &mut self,
        mut visit: impl FnMut(TermOccurrences<'_>) -> Result<(), E>,
    ) -> Result<(), E> {
        if self.keep_positions && !self.is_grouped {
            self.group_positions();
            self.is_grouped = true;
        }
        for t in &self.terms {
            let positions = if self.keep_positions {
                &self.grouped[t.first as usize..(t.first + t.freq) as usize]
            } else {
                &[]
            };
            visit(TermOccurrences {
                term: &self.text[t.start as usize..(t.start + t.len) as usize],
                hash: t.hash,
                freq: t.freq,
                positions,
            })?;
        }
        Ok(())
    }

    /// Sorts the occurrences' positions by term (a counting sort: each term's run starts after
    /// the runs of the terms before it), keeping document order within a term.
    fn group_positions(&mut self) {
        let mut next = 0u32;
        for t in &mut self.terms {
            t.first = next;
            next += t.freq;
        }
        self.grouped.clear();
        self.grouped.resize(next as usize, 0);
        // `first` serves as each run's write cursor, then goes back to the run's start.
        for &(term, position) in &self.occurrences {
            let t = &mut self.terms[term as usize];
            self.grouped[t.first as usize] = position;
            t.first += 1;
        }
        for t in &mut self.terms {
            t.first -= t.freq;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;
    use std::collections::BTreeMap;

    proptest! {
        /// Against a map from term to positions: the same terms, in first-occurrence order,
        /// the same frequencies and positions; and the table is reusable after `clear`.
        #[test]
        fn groups_occurrences_like_a_map_of_lists(
            docs in prop::collection::vec(prop::collection::vec(0u8..12, 0..200), 1..4),
            keep_positions: bool,
        ) {
            let mut terms = DocumentTerms::new(keep_positions);
            for tokens in docs {
                terms.clear();
                let mut want: BTreeMap<String, Vec<u32>> = BTreeMap::new();
                let mut order = Vec::new();
                for (position, token) in tokens.iter().enumerate() {
                    let token = format!("t{token}");
                    terms.add(&token, 3 * position as u32);
                    let list = want.entry(token.clone()).or_default();
                    if list.is_empty() {
                        order.push(token);
                    }
                    list.push(3 * position as u32);
                }
                let mut got = Vec::new();
                terms
                    .for_each(|t| -> Result<(), ()> {
                        assert_eq!(t.hash, hash_term(t.term));
                        got.push((String::from_utf8(t.term.to_vec()).unwrap(), t.freq, t.positions.to_vec()));
                        Ok(())
                    })
                    .unwrap();
                prop_assert_eq!(got.len(), order.len());
                for ((term, freq, positions), expected) in got.iter().zip(&order) {
                    prop_assert_eq!(term, expected);
                    let list = &want[expected];
                    prop_assert_eq!(*freq as usize, list.len());
                    if keep_positions {
                        prop_assert_eq!(positions, list);
                    } else {
                        prop_assert!(positions.is_empty());
                    }
                }
            }
        }
    }
}
