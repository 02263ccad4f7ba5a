//! The in-memory inverted index of one indexing thread: a hash table from term to a chain of
//! posting blocks (structure of arrays: 256 DIDs, 256 frequencies), flushed to a segment when
//! it outgrows its share of the memory budget.

use std::path::Path;

use apcache_codec::BLOCK_LEN;
use rustc_hash::FxHashMap;

use crate::analyzer::Analyzer;
use crate::ingest::Document;
use crate::segment::{DocMap, SegmentMeta, SegmentWriter};
use crate::IndexError;

/// A full block of postings.
struct PostingBlock {
    docs: [u32; BLOCK_LEN],
    freqs: [u32; BLOCK_LEN],
}

/// One term's postings: sealed full blocks, then the growing last block.
#[derive(Default)]
struct TermPostings {
    sealed: Vec<PostingBlock>,
    docs: Vec<u32>,
    freqs: Vec<u32>,
}

/// Estimated bytes a new term costs besides its text (hash entry, list header).
const TERM_OVERHEAD: usize = 96;
/// Estimated bytes per posting in the growing blocks (two u32 plus growth slack).
const POSTING_BYTES: usize = 10;

/// The postings, norms and stored documents of the documents one thread indexed since its last
/// flush.
#[derive(Default)]
pub struct PostingTable {
    ids: FxHashMap<Box<str>, u32>,
    terms: Vec<TermPostings>,
    docs: DocMap,
    lengths: Vec<u32>,
    stored: Vec<u8>,
    stored_ends: Vec<usize>,
    bytes: usize,
    postings: u64,
}

impl PostingTable {
    /// Estimated memory held, in bytes.
    pub fn bytes(&self) -> usize {
        self.bytes
    }

    /// Documents held.
    pub fn documents(&self) -> usize {
        self.lengths.len()
    }

    /// Inverts `doc` as global DID `did` (greater than every DID already held).
    pub fn add_document(&mut self, did: u32, doc: &Document, analyzer: &Analyzer) {
        let mut length = 0u32;
        for text in [doc.title.as_str(), doc.body.as_str()] {
            analyzer.for_each_token(text, |token| {
                length += 1;
                let id = match self.ids.get(token) {
                    Some(&id) => id,
                    None => {
                        let id = self.terms.len() as u32;
                        self.ids.insert(token.into(), id);
                        self.terms.push(TermPostings::default());
                        self.bytes += token.len() + TERM_OVERHEAD;
                        id
                    }
                };
                let list = &mut self.terms[id as usize];
                if list.docs.last() == Some(&did) {
                    *list.freqs.last_mut().expect("parallel arrays") += 1;
                    return;
                }
                if list.docs.len() == BLOCK_LEN {
                    let mut block = PostingBlock {
                        docs: [0; BLOCK_LEN],
                        freqs: [0; BLOCK_LEN],
                    };
                    block.docs.copy_from_slice(&list.docs);
                    block.freqs.copy_from_slice(&list.freqs);
                    list.sealed.push(block);
                    list.docs.clear();
                    list.freqs.clear();
                }
                list.docs.push(did);
                list.freqs.push(1);
                self.bytes += POSTING_BYTES;
                self.postings += 1;
            });
        }
        self.docs.push(did);
        self.lengths.push(length);
        crate::segment::append_raw(&doc.title, &doc.body, &mut self.stored);
        self.stored_ends.push(self.stored.len());
        self.bytes += doc.title.len() + doc.body.len() + 16;
    }

    /// Writes everything held as segment `name` of `dir` and empties the table.
    pub fn flush(
        &mut self,
        dir: &Path,
        name: &str,
        codec: &str,
    ) -> Result<SegmentMeta, IndexError> {
        let table = std::mem::take(self);
        let mut writer = SegmentWriter::create(dir, name, codec, table.docs, table.lengths)?;
        let mut order: Vec<(&str, u32)> = table.ids.iter().map(|(t, &id)| (&**t, id)).collect();
        order.sort_unstable_by(|a, b| a.0.as_bytes().cmp(b.0.as_bytes()));
        let (mut docs, mut freqs) = (Vec::new(), Vec::new());
        for (term, id) in order {
            let list = &table.terms[id as usize];
            docs.clear();
            freqs.clear();
            for block in &list.sealed {
                docs.extend_from_slice(&block.docs);
                freqs.extend_from_slice(&block.freqs);
            }
            docs.extend_from_slice(&list.docs);
            freqs.extend_from_slice(&list.freqs);
            writer.add_term(term.as_bytes(), &docs, &freqs)?;
        }
        let mut start = 0;
        for &end in &table.stored_ends {
            writer.add_stored_raw(&table.stored[start..end])?;
            start = end;
        }
        writer.finish()
    }
}
