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
use crate::segment::{compress_block, DocMap, SegmentMeta, SegmentWriter, STORE_BLOCK_TARGET};
use crate::IndexError;

/// Terms up to this many bytes are stored inside the hash entry (`CompactString`).
const KEY_INLINE_BYTES: usize = 24;

/// The postings, norms and stored documents of the documents one thread indexed since its last
/// flush.
pub struct PostingTable {
    arena: BlockArena,
    tails: TailPool,
    contents: Contents,
    /// Whether positions are kept.
    keep_positions: bool,
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
    /// The position of the term's last occurrence (positions are kept as gaps from it).
    last_position: u32,
}

/// What a flush writes and empties.
#[derive(Default)]
struct Contents {
    ids: FxHashMap<CompactString, TermSlot>,
    /// Per term, the arena numbers of its sealed blocks.
    sealed: Vec<Vec<u32>>,
    /// Per term, when positions are kept: every occurrence's position as a VByte, the first
    /// of each document as it is, the others as gaps from the one before.
    positions: Vec<Vec<u8>>,
    docs: DocMap,
    lengths: Vec<u32>,
    /// Stored documents, compressed a block at a time as they arrive (as the segment's store
    /// will hold them), with each block's document count; then the raw block being filled.
    store_blocks: Vec<(Vec<u8>, u32)>,
    raw_block: Vec<u8>,
    raw_block_docs: u32,
    bytes: usize,
    postings: u64,
}

impl Contents {
    /// Compresses the raw store block, if it holds any document.
    fn seal_store_block(&mut self) -> Result<(), IndexError> {
        if self.raw_block_docs == 0 {
            return Ok(());
        }
        let mut block = Vec::with_capacity(self.raw_block.len() / 2);
        compress_block(&self.raw_block, &mut block)?;
        block.shrink_to_fit();
        self.bytes += block.capacity() + 32;
        self.bytes -= self.raw_block.capacity();
        self.store_blocks.push((block, self.raw_block_docs));
        self.raw_block = Vec::new();
        self.raw_block_docs = 0;
        Ok(())
    }
}

impl PostingTable {
    /// An empty table whose blocks go to an arena placed as `placement`, keeping the terms'
    /// positions when `keep_positions`.
    pub fn new(
        placement: ArenaPlacement,
        keep_positions: bool,
    ) -> Result<PostingTable, IndexError> {
        Ok(PostingTable {
            arena: BlockArena::new(placement)?,
            tails: TailPool::default(),
            contents: Contents::default(),
            keep_positions,
        })
    }

    /// Memory held, in bytes, plus what a flush will allocate to sort the terms: the hash
    /// table at its capacity, the arena's and the tail pool's chunks, the stored documents,
    /// and the heap parts that [`Contents::bytes`] tracks.
    pub fn bytes(&self) -> usize {
        let c = &self.contents;
        let entry = std::mem::size_of::<(CompactString, TermSlot)>();
        let sort_entry = std::mem::size_of::<(&str, TermSlot)>();
        c.bytes
            + c.ids.capacity() * (entry + 1)
            + c.ids.len() * sort_entry
            + c.sealed.capacity() * std::mem::size_of::<Vec<u32>>()
            + c.positions.capacity() * std::mem::size_of::<Vec<u8>>()
            + c.lengths.capacity() * 4
            + c.store_blocks.capacity() * std::mem::size_of::<(Vec<u8>, u32)>()
            + self.arena.allocated_bytes()
            + self.tails.allocated_bytes()
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
        let keep_positions = self.keep_positions;
        let mut length = 0u32;
        let mut failure = None;
        // The title and the body are one stream of positions, as if joined by a space.
        let mut offset = 0u32;
        for text in [doc.title.as_str(), doc.body.as_str()] {
            let words = analyzer.for_each_token_with_position(text, |position, token| {
                let position = offset.saturating_add(position);
                length += 1;
                let slot = match this.ids.get_mut(token) {
                    Some(slot) => slot,
                    None => {
                        let id = this.sealed.len() as u32;
                        this.sealed.push(Vec::new());
                        if keep_positions {
                            let mut first = Vec::new();
                            push_vbyte(&mut first, position);
                            this.bytes += first.capacity();
                            this.positions.push(first);
                        }
                        if token.len() > KEY_INLINE_BYTES {
                            this.bytes += token.len();
                        }
                        this.postings += 1;
                        this.ids.insert(
                            CompactString::new(token),
                            TermSlot {
                                doc: did,
                                freq: 1,
                                id,
                                tail: Tail::default(),
                                last_position: position,
                            },
                        );
                        return;
                    }
                };
                if keep_positions {
                    let value = if slot.doc == did {
                        position.wrapping_sub(slot.last_position)
                    } else {
                        position
                    };
                    let list = &mut this.positions[slot.id as usize];
                    let capacity = list.capacity();
                    push_vbyte(list, value);
                    this.bytes += list.capacity() - capacity;
                    slot.last_position = position;
                }
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
                tails.push(&mut slot.tail, slot.doc, slot.freq);
                slot.doc = did;
                slot.freq = 1;
                this.postings += 1;
            });
            offset = offset.saturating_add(words);
        }
        if let Some(e) = failure {
            return Err(e);
        }
        // A store block never spans two runs of DIDs (see `SegmentWriter::add_stored_raw`).
        if this.docs.runs().last().is_some_and(|r| r[0] + r[1] != did) {
            this.seal_store_block()?;
        }
        this.docs.push(did);
        this.lengths.push(length);
        let before = this.raw_block.capacity();
        crate::segment::append_raw(&doc.title, &doc.body, &mut this.raw_block);
        this.raw_block_docs += 1;
        this.bytes += this.raw_block.capacity() - before;
        if this.raw_block.len() >= STORE_BLOCK_TARGET {
            this.seal_store_block()?;
        }
        Ok(())
    }

    /// Writes everything held as segment `name` of `dir` and empties the table.
    pub fn flush(
        &mut self,
        dir: &Path,
        name: &str,
        codec: apcache_codec::CodecKind,
    ) -> Result<SegmentMeta, IndexError> {
        let mut table = std::mem::take(&mut self.contents);
        table.seal_store_block()?;
        let mut writer = SegmentWriter::create(dir, name, codec, table.docs, table.lengths)?;
        if self.keep_positions {
            writer.keep_positions()?;
        }
        let mut positions = Vec::new();
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
            let positions = if self.keep_positions {
                let bytes = &table.positions[slot.id as usize];
                decode_positions(bytes, &freqs, &mut positions).ok_or_else(|| {
                    IndexError::InvalidArgument(format!("term {term:?}: positions lost"))
                })?;
                Some(positions.as_slice())
            } else {
                None
            };
            writer.add_term(term.as_bytes(), &docs, &freqs, positions)?;
        }
        for (block, docs) in &table.store_blocks {
            writer.add_stored_block(block, *docs)?;
        }
        self.arena.release();
        self.tails.release();
        writer.finish()
    }
}

/// Appends `value` as a VByte (7 bits a byte, low first, high bit: more follow).
fn push_vbyte(out: &mut Vec<u8>, mut value: u32) {
    while value >= 0x80 {
        out.push(value as u8 | 0x80);
        value >>= 7;
    }
    out.push(value as u8);
}

/// Decodes a term's VByte positions (see `Contents::positions`) into `out` as absolute
/// positions, `freqs[i]` for posting `i`; `None` if they do not add up.
fn decode_positions(bytes: &[u8], freqs: &[u32], out: &mut Vec<u32>) -> Option<()> {
    out.clear();
    let mut at = 0;
    let mut next = || -> Option<u32> {
        let mut value = 0u32;
        for shift in (0..35).step_by(7) {
            let byte = *bytes.get(at)?;
            at += 1;
            value |= u32::from(byte & 0x7F) << shift;
            if byte < 0x80 {
                return Some(value);
            }
        }
        None
    };
    for &freq in freqs {
        let mut position = next()?;
        out.push(position);
        for _ in 1..freq {
            position = position.checked_add(next()?)?;
            out.push(position);
        }
    }
    (at == bytes.len()).then_some(())
}
