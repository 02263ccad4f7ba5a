//! The in-memory inverted index of one indexing thread: a hash table from term to a chain of
//! posting blocks (structure of arrays: 256 DIDs, 256 frequencies), flushed to a segment when
//! it outgrows its share of the memory budget. Full blocks move to a [`BlockArena`], whose
//! placement is configurable; the hash table and the growing tails ([`TailPool`]) stay in
//! process memory.

use std::path::Path;

use apcache_codec::BLOCK_LEN;
use compact_str::CompactString;
use rustc_hash::FxHashMap;

use super::arena::{ArenaPlacement, BlockArena};
use super::tail_pool::{deinterleave, Tail, TailPool};
use crate::analyzer::Analyzer;
use crate::ingest::Document;
use crate::segment::{DocMap, SegmentMeta, SegmentWriter};
use crate::IndexError;

/// Estimated bytes a new term costs besides its text and its tail (hash entry with its
/// control byte and load-factor slack, sealed-block list header).
const TERM_OVERHEAD: usize = 80;

/// The postings, norms and stored documents of the documents one thread indexed since its last
/// flush.
pub struct PostingTable {
    arena: BlockArena,
    tails: TailPool,
    contents: Contents,
}

/// A term's entry in the hash table. The term's newest posting lives here, in the entry itself,
/// until a later document brings the term again: most tokens repeat a term already seen in the
/// same document, and they then touch only this entry (short terms are stored inline in the
/// key, so the lookup itself follows no pointer).
#[derive(Clone, Copy)]
struct TermSlot {
    /// DID of the newest posting.
    doc: u32,
    /// Its frequency so far.
    freq: u32,
    /// Index of the term's list of sealed blocks.
    id: u32,
    /// The postings between the sealed blocks and the newest one.
    tail: Tail,
}

/// What a flush writes and empties.
#[derive(Default)]
struct Contents {
    ids: FxHashMap<CompactString, TermSlot>,
    /// Per term, the arena numbers of its sealed blocks.
    sealed: Vec<Vec<u32>>,
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
            tails: TailPool::default(),
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

    /// Bytes the tail pool has allocated (its high-water mark).
    pub fn tail_pool_bytes(&self) -> usize {
        self.tails.allocated_bytes()
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
        let tails = &mut self.tails;
        let this = &mut self.contents;
        let mut length = 0u32;
        let mut failure = None;
        for text in [doc.title.as_str(), doc.body.as_str()] {
            analyzer.for_each_token(text, |token| {
                length += 1;
                let slot = match this.ids.get_mut(token) {
                    Some(slot) => slot,
                    None => {
                        let id = this.sealed.len() as u32;
                        this.sealed.push(Vec::new());
                        this.bytes += token.len() + TERM_OVERHEAD;
                        this.postings += 1;
                        this.ids.insert(
                            CompactString::new(token),
                            TermSlot {
                                doc: did,
                                freq: 1,
                                id,
                                tail: Tail::default(),
                            },
                        );
                        return;
                    }
                };
                if slot.doc == did {
                    slot.freq += 1;
                    return;
                }
                // A new document for the term: its newest posting moves to the tail.
                if slot.tail.is_full_block() {
                    let mut block = [[0u32; BLOCK_LEN]; 2];
                    for (i, pair) in tails.pairs(&slot.tail).chunks_exact(2).enumerate() {
                        block[0][i] = pair[0];
                        block[1][i] = pair[1];
                    }
                    match arena.push(&block[0], &block[1]) {
                        Ok(number) => this.sealed[slot.id as usize].push(number),
                        Err(e) => {
                            failure.get_or_insert(e);
                            return;
                        }
                    }
                    this.bytes += 4;
                    TailPool::reset(&mut slot.tail);
                }
                this.bytes += tails.push(&mut slot.tail, slot.doc, slot.freq);
                slot.doc = did;
                slot.freq = 1;
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
        let mut order: Vec<(&str, TermSlot)> = table
            .ids
            .iter()
            .map(|(t, &slot)| (t.as_str(), slot))
            .collect();
        order.sort_unstable_by(|a, b| a.0.as_bytes().cmp(b.0.as_bytes()));
        let (mut docs, mut freqs) = (Vec::new(), Vec::new());
        for (term, slot) in order {
            docs.clear();
            freqs.clear();
            for &block in &table.sealed[slot.id as usize] {
                let (block_docs, block_freqs) = self.arena.block(block);
                docs.extend_from_slice(block_docs);
                freqs.extend_from_slice(block_freqs);
            }
            deinterleave(self.tails.pairs(&slot.tail), &mut docs, &mut freqs);
            docs.push(slot.doc);
            freqs.push(slot.freq);
            writer.add_term(term.as_bytes(), &docs, &freqs)?;
        }
        let mut start = 0;
        for &end in &table.stored_ends {
            writer.add_stored_raw(&table.stored[start..end])?;
            start = end;
        }
        self.arena.clear();
        self.tails.clear();
        writer.finish()
    }
}
