//! The in-memory inverted index of one indexing thread: a hash table from term to a chain of
//! posting blocks (structure of arrays: 256 DIDs, 256 frequencies), flushed to a segment when
//! it outgrows its share of the memory budget. Full blocks move to a [`BlockArena`], whose
//! placement is configurable; the hash table and the growing tails stay in process memory.

use std::path::Path;

use apcache_codec::BLOCK_LEN;
use rustc_hash::FxHashMap;

use super::arena::{ArenaPlacement, BlockArena};
use crate::analyzer::Analyzer;
use crate::ingest::Document;
use crate::segment::{DocMap, SegmentMeta, SegmentWriter};
use crate::IndexError;

/// One term's postings: sealed full blocks (numbers in the arena), then the growing last block.
#[derive(Default)]
struct TermPostings {
    sealed: Vec<u32>,
    docs: Vec<u32>,
    freqs: Vec<u32>,
}

/// Estimated bytes a new term costs besides its text (hash entry, list header).
const TERM_OVERHEAD: usize = 96;
/// Estimated bytes per posting (two u32 in a block, plus growth slack of the tails).
const POSTING_BYTES: usize = 10;

/// The postings, norms and stored documents of the documents one thread indexed since its last
/// flush.
pub struct PostingTable {
    arena: BlockArena,
    contents: Contents,
}

/// What a flush writes and empties.
#[derive(Default)]
struct Contents {
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
    /// An empty table whose blocks go to an arena placed as `placement`.
    pub fn new(placement: ArenaPlacement) -> Result<PostingTable, IndexError> {
        Ok(PostingTable {
            arena: BlockArena::new(placement)?,
            contents: Contents::default(),
        })
    }

    /// Estimated memory held, in bytes.
    pub fn bytes(&self) -> usize {
        self.contents.bytes
    }

    /// Bytes the block arena has allocated (its high-water mark).
    pub fn arena_bytes(&self) -> usize {
        self.arena.allocated_bytes()
    }

    /// Documents held.
    pub fn documents(&self) -> usize {
        self.contents.lengths.len()
    }

    /// Inverts `doc` as global DID `did` (greater than every DID already held).
    pub fn add_document(
        &mut self,
        did: u32,
        doc: &Document,
        analyzer: &Analyzer,
    ) -> Result<(), IndexError> {
        let arena = &mut self.arena;
        let this = &mut self.contents;
        let mut length = 0u32;
        let mut failure = None;
        for text in [doc.title.as_str(), doc.body.as_str()] {
            analyzer.for_each_token(text, |token| {
                length += 1;
                let id = match this.ids.get(token) {
                    Some(&id) => id,
                    None => {
                        let id = this.terms.len() as u32;
                        this.ids.insert(token.into(), id);
                        this.terms.push(TermPostings::default());
                        this.bytes += token.len() + TERM_OVERHEAD;
                        id
                    }
                };
                let list = &mut this.terms[id as usize];
                if list.docs.last() == Some(&did) {
                    *list.freqs.last_mut().expect("parallel arrays") += 1;
                    return;
                }
                if list.docs.len() == BLOCK_LEN {
                    match arena.push(&list.docs, &list.freqs) {
                        Ok(block) => list.sealed.push(block),
                        Err(e) => {
                            failure.get_or_insert(e);
                            return;
                        }
                    }
                    list.docs.clear();
                    list.freqs.clear();
                }
                list.docs.push(did);
                list.freqs.push(1);
                this.bytes += POSTING_BYTES;
                this.postings += 1;
            });
        }
        if let Some(e) = failure {
            return Err(e);
        }
        this.docs.push(did);
        this.lengths.push(length);
        crate::segment::append_raw(&doc.title, &doc.body, &mut this.stored);
        this.stored_ends.push(this.stored.len());
        this.bytes += doc.title.len() + doc.body.len() + 16;
        Ok(())
    }

    /// Writes everything held as segment `name` of `dir` and empties the table.
    pub fn flush(
        &mut self,
        dir: &Path,
        name: &str,
        codec: &str,
    ) -> Result<SegmentMeta, IndexError> {
        let table = std::mem::take(&mut self.contents);
        let mut writer = SegmentWriter::create(dir, name, codec, table.docs, table.lengths)?;
        let mut order: Vec<(&str, u32)> = table.ids.iter().map(|(t, &id)| (&**t, id)).collect();
        order.sort_unstable_by(|a, b| a.0.as_bytes().cmp(b.0.as_bytes()));
        let (mut docs, mut freqs) = (Vec::new(), Vec::new());
        for (term, id) in order {
            let list = &table.terms[id as usize];
            docs.clear();
            freqs.clear();
            for &block in &list.sealed {
                let (block_docs, block_freqs) = self.arena.block(block);
                docs.extend_from_slice(block_docs);
                freqs.extend_from_slice(block_freqs);
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
        self.arena.clear();
        writer.finish()
    }
}
