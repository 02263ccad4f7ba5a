//! A cursor over one term's postings in one segment, block by block.
//!
//! The skip entries are the cursor's map: `advance` compares a target with the blocks' last
//! DIDs and decodes only the block that may hold it (the original study's skip-list intersection),
//! then gallops inside the decoded block from the current position (targets of an intersection are
//! usually near); frequencies are decoded only when a score is asked for; and the skip entries'
//! best posting (or maximum frequency and minimum length) gives each block's score bound without
//! decoding it.

use std::sync::Arc;

use apcache_codec::{Isa, BLOCK_LEN};

use super::bitset_filter;
use super::bm25::Bm25;
use super::postings_source::TermBlocks;
use super::query_terms::TermEntry;
use super::sorted_search;
use super::stats::SearchStats;
use crate::format::{SkipEntries, SkipEntry, TermInfo};
use crate::segment::{DocLengths, SegmentReader};
use crate::IndexError;

/// DID of an exhausted cursor.
pub const NO_MORE_DOCS: u32 = u32::MAX;

/// DIDs compared with a target at once inside a block (one vector compare).
const PROBE: usize = 8;

/// Most frequencies [`TermCursor::select_freqs`] reads one by one from an encoded block;
/// beyond that, decoding the block is cheaper. Measured on `pfor-delta-simd` blocks of
/// frequencies: the first selected value 6-14 ns and each further one 1.5-5 ns, against
/// 16-27 ns to decode the block, plus the pass that adds the stored offset of one.
const SELECT_MAX: usize = 6;

/// The DIDs of one block, as [`TermCursor::for_each_block`] hands them over.
pub enum BlockDids<'b> {
    /// Decoded, increasing.
    Docs(&'b [u32]),
    /// A block stored as a bitset: little-endian 64-bit `words`, bit `k` set for DID
    /// `first + k`.
    Bits {
        /// The block's first DID (its skip entry's).
        first: u32,
        /// The bitset, as stored.
        words: &'b [u8],
    },
}

/// A term's postings held decoded: the segment's lists decoded at load, or the lone posting
/// a term of one document keeps in its record.
#[derive(Clone, Copy)]
enum Decoded<'a> {
    /// The whole list's DIDs and frequencies.
    List(&'a [u32], &'a [u32]),
    /// One posting: its DID and frequency.
    Lone([u32; 1], [u32; 1]),
}

impl Decoded<'_> {
    #[inline]
    fn docs(&self) -> &[u32] {
        match self {
            Decoded::List(docs, _) => docs,
            Decoded::Lone(docs, _) => docs,
        }
    }

    #[inline]
    fn freqs(&self) -> &[u32] {
        match self {
            Decoded::List(_, freqs) => freqs,
            Decoded::Lone(_, freqs) => freqs,
        }
    }
}

/// One term's postings in one segment.
pub struct TermCursor<'a> {
    segment: &'a SegmentReader,
    info: TermInfo,
    bytes: &'a [u8],
    /// The term's skip entries, still encoded (checked to be all there at creation).
    skips: SkipEntries<'a>,
    /// Score weight (IDF) of the term.
    weight: f32,
    /// Current block, its skip entry, and whether its DIDs / freqs are decoded.
    block: usize,
    entry: SkipEntry,
    docs_decoded: bool,
    freqs_decoded: bool,
    len: usize,
    pos: usize,
    doc: u32,
    /// The block's DIDs, then [`PROBE`] entries of [`NO_MORE_DOCS`] after the last, so that
    /// a probe never reads past the block.
    docs: Box<[u32; BLOCK_LEN + PROBE]>,
    freqs: Box<[u32; BLOCK_LEN]>,
    /// Shallow position: the block whose bound [`TermCursor::shallow_advance`] reports.
    shallow: usize,
    shallow_entry: SkipEntry,
    /// The shallow block's score bound, once computed, and the scorer it was computed with
    /// (by address): a bound costs a division, and windows ask for it many times per block.
    shallow_bound: Option<(usize, f32)>,
    /// The decoded list, when the segment was loaded direct or the term has one posting.
    direct: Option<Decoded<'a>>,
    /// The term's blocks from a postings source (a cache tier), else read from `bytes`.
    held: Option<Box<dyn TermBlocks + 'a>>,
    /// Whether block bounds may use the skip entries' best postings (the query scores as the
    /// segment chose them), else the looser (max freq, min length) pair.
    best_postings: bool,
    /// The instruction set of in-block searches.
    isa: Isa,
    /// Whether the current block is stored as a bitset, once [`TermCursor::dense_words`]
    /// checked it: where its words are in the block's bytes.
    dense: Option<Option<std::ops::Range<usize>>>,
    /// Work counters.
    blocks_decoded: u32,
    postings_decoded: u64,
    /// For a term of a named text field: the field's lengths and scorer, which score it
    /// instead of the default field's (boxed: the default field's cursors, the hot ones of a
    /// title-and-body index, stay as small as they were).
    field: Option<Box<InField<'a>>>,
}

/// The lengths and the scorer of a named text field, for the cursor of one of its terms.
#[derive(Clone)]
pub struct InField<'a> {
    /// The segment's documents' lengths in the field.
    pub lengths: DocLengths<'a>,
    /// The field's scorer.
    pub bm25: Arc<Bm25>,
}

impl<'a> TermCursor<'a> {
    /// A cursor on the first posting of `entry`.
    pub fn new(
        segment: &'a SegmentReader,
        entry: TermEntry,
        weight: f32,
    ) -> Result<TermCursor<'a>, IndexError> {
        TermCursor::with_blocks(segment, entry, weight, None)
    }

    /// A cursor on the first posting of `entry` that reads its blocks from `held` when given
    /// (a postings source's copy, which verified them), else from the segment's decoded copy
    /// or its postings file (verified the first time the process reads them; a term left out
    /// of the decoded copy as damaged is read there, and fails its check again).
    pub fn with_blocks(
        segment: &'a SegmentReader,
        entry: TermEntry,
        weight: f32,
        held: Option<Box<dyn TermBlocks + 'a>>,
    ) -> Result<TermCursor<'a>, IndexError> {
        let info = entry.info;
        let (direct, held) = match info.lone_posting() {
            // Kept in the record, which was verified: there is nothing to read.
            Some((doc, freq)) => (Some(Decoded::Lone([doc], [freq])), None),
            None => (
                segment
                    .direct()
                    .and_then(|d| d.list(&entry))
                    .map(|(docs, freqs)| Decoded::List(docs, freqs)),
                held,
            ),
        };
        let bytes = match (&held, direct) {
            (Some(_), _) => &[],
            // Decoded at open, which verified them.
            (None, Some(_)) => segment.postings_bytes(&info)?,
            (None, None) => segment.verified_postings(&entry)?,
        };
        let skips = segment.term_skip_entries(&info)?;
        let Some(first) = skips.first() else {
            return Err(IndexError::corrupt(
                &segment.meta().name,
                "a term without blocks",
            ));
        };
        let entry = SkipEntry::from_bytes(first);
        let mut cursor = TermCursor {
            segment,
            info,
            bytes,
            skips,
            weight,
            block: 0,
            entry,
            docs_decoded: false,
            freqs_decoded: false,
            len: BLOCK_LEN.min(info.doc_freq as usize),
            pos: 0,
            doc: 0,
            docs: Box::new([NO_MORE_DOCS; BLOCK_LEN + PROBE]),
            freqs: Box::new([0; BLOCK_LEN]),
            shallow: 0,
            shallow_entry: entry,
            shallow_bound: None,
            direct,
            held,
            best_postings: false,
            isa: Isa::detect(),
            dense: None,
            blocks_decoded: 0,
            postings_decoded: 0,
            field: None,
        };
        cursor.decode_docs()?;
        cursor.doc = cursor.docs[0];
        Ok(cursor)
    }

    /// Makes the cursor score with `field`'s lengths and scorer (a term of a named text
    /// field): [`TermCursor::score`] and the block bounds use them whatever scorer they are
    /// given.
    pub fn in_field(mut self, field: InField<'a>) -> TermCursor<'a> {
        self.field = Some(Box::new(field));
        self.shallow_bound = None;
        self
    }

    /// The lengths the term's postings are scored with: its field's.
    #[inline]
    pub fn lengths(&self) -> DocLengths<'a> {
        match &self.field {
            Some(field) => field.lengths,
            None => self.segment.doc_lengths(),
        }
    }

    /// The scorer of the term's named text field; `None` for the default field.
    pub fn field_scorer(&self) -> Option<Arc<Bm25>> {
        self.field.as_ref().map(|field| field.bm25.clone())
    }

    /// The scorer of the term's field, `given` for the default field.
    #[inline]
    pub fn scorer<'s>(&'s self, given: &'s Bm25) -> &'s Bm25 {
        match &self.field {
            Some(field) => &field.bm25,
            None => given,
        }
    }

    /// Documents holding the term in this segment.
    pub fn doc_freq(&self) -> u32 {
        self.info.doc_freq
    }

    /// The term's weight.
    pub fn weight(&self) -> f32 {
        self.weight
    }

    /// The segment the cursor reads.
    pub fn segment(&self) -> &'a SegmentReader {
        self.segment
    }

    /// The current DID, or [`NO_MORE_DOCS`].
    #[inline]
    pub fn doc(&self) -> u32 {
        self.doc
    }

    /// Number of blocks of the term.
    #[inline]
    pub fn blocks(&self) -> usize {
        self.skips.len()
    }

    /// The skip entry of block `block` (< [`TermCursor::blocks`]).
    #[inline]
    pub fn entry(&self, block: usize) -> SkipEntry {
        SkipEntry::from_bytes(&self.skips[block])
    }

    /// The work this cursor did: blocks and postings decoded, blocks never decoded.
    pub fn stats(&self) -> SearchStats {
        SearchStats {
            blocks_decoded: u64::from(self.blocks_decoded),
            blocks_skipped: (self.blocks() as u64).saturating_sub(u64::from(self.blocks_decoded)),
            postings_decoded: self.postings_decoded,
        }
    }

    #[inline(never)]
    fn decode_docs(&mut self) -> Result<(), IndexError> {
        super::cancel::check()?;
        self.blocks_decoded += 1;
        self.postings_decoded += self.len as u64;
        self.docs_decoded = true;
        if let Some(direct) = &self.direct {
            let start = self.block * BLOCK_LEN;
            self.docs[..self.len].copy_from_slice(&direct.docs()[start..start + self.len]);
            self.docs[self.len..self.len + PROBE].fill(NO_MORE_DOCS);
            return Ok(());
        }
        let input = Self::docs_input(&self.held, self.bytes, self.block, &self.entry)
            .ok_or_else(|| self.corrupt())?;
        self.segment
            .codec()
            .decode_docs(self.entry.first_doc, input, &mut self.docs[..self.len])
            .map_err(|source| IndexError::Codec {
                file: self.segment.meta().name.clone(),
                source,
            })?;
        if self.len < BLOCK_LEN {
            self.docs[self.len..self.len + PROBE].fill(NO_MORE_DOCS);
        }
        Ok(())
    }

    /// The encoded DIDs of block `block` (and what follows them), from `held` or `bytes`
    /// (`None`: an offset past the term's bytes).
    #[inline]
    fn docs_input<'s>(
        held: &'s Option<Box<dyn TermBlocks + 'a>>,
        bytes: &'a [u8],
        block: usize,
        entry: &SkipEntry,
    ) -> Option<&'s [u8]> {
        match held {
            Some(held) => Some(held.docs(block)),
            None => bytes.get(entry.docs_offset as usize..),
        }
    }

    #[inline(never)]
    fn decode_freqs(&mut self) -> Result<(), IndexError> {
        self.freqs_decoded = true;
        if let Some(direct) = &self.direct {
            let start = self.block * BLOCK_LEN;
            self.freqs[..self.len].copy_from_slice(&direct.freqs()[start..start + self.len]);
            return Ok(());
        }
        let input = match &self.held {
            Some(held) => held.freqs(self.block),
            None => {
                let at = self.entry.freqs_offset as usize;
                self.bytes.get(at..).ok_or_else(|| self.corrupt())?
            }
        };
        self.segment
            .codec()
            .decode_freqs(input, &mut self.freqs[..self.len])
            .map_err(|source| self.codec_error(source))?;
        for f in &mut self.freqs[..self.len] {
            *f = f.wrapping_add(1);
        }
        Ok(())
    }

    /// The encoded frequencies of the current block (and what follows them).
    #[inline]
    fn freq_bytes(&self) -> Result<&[u8], IndexError> {
        match &self.held {
            Some(held) => Ok(held.freqs(self.block)),
            None => {
                let at = self.entry.freqs_offset as usize;
                self.bytes.get(at..).ok_or_else(|| self.corrupt())
            }
        }
    }

    fn codec_error(&self, source: apcache_codec::CodecError) -> IndexError {
        IndexError::Codec {
            file: self.segment.meta().name.clone(),
            source,
        }
    }

    fn corrupt(&self) -> IndexError {
        IndexError::corrupt(&self.segment.meta().name, "block offset past the term")
    }

    /// Moves to block `block` (after the current one) without decoding it.
    fn enter_block(&mut self, block: usize) {
        self.block = block;
        self.entry = if block == self.shallow {
            self.shallow_entry
        } else {
            self.entry(block)
        };
        self.len = BLOCK_LEN.min(self.info.doc_freq as usize - block * BLOCK_LEN);
        self.pos = 0;
        // On the block's first posting, whose DID the skip entry knows: a real position even
        // before the block is decoded.
        self.doc = self.entry.first_doc;
        self.docs_decoded = false;
        self.freqs_decoded = false;
        self.dense = None;
    }

    /// Moves to the next posting; returns its DID or [`NO_MORE_DOCS`].
    #[inline(always)]
    pub fn next_doc(&mut self) -> Result<u32, IndexError> {
        self.pos += 1;
        if self.pos < self.len && self.docs_decoded {
            self.doc = self.docs[self.pos];
            return Ok(self.doc);
        }
        self.next_block()
    }

    #[cold]
    #[inline(never)]
    fn next_block(&mut self) -> Result<u32, IndexError> {
        if self.doc == NO_MORE_DOCS {
            self.exhaust();
            return Ok(NO_MORE_DOCS);
        }
        if self.pos < self.len && !self.docs_decoded {
            // A block entered by `seek_block` and never decoded.
            self.decode_docs()?;
            self.doc = self.docs[self.pos];
            return Ok(self.doc);
        }
        if self.block + 1 >= self.blocks() {
            self.exhaust();
            return Ok(NO_MORE_DOCS);
        }
        self.enter_block(self.block + 1);
        self.decode_docs()?;
        self.doc = self.docs[0];
        Ok(self.doc)
    }

    fn exhaust(&mut self) {
        self.doc = NO_MORE_DOCS;
        // Keep `next_doc` on its slow path from now on.
        self.pos = self.len;
    }

    /// Moves to the first posting with DID at least `target` (never backwards); returns its
    /// DID or [`NO_MORE_DOCS`]. Blocks that end before `target` are skipped undecoded.
    #[inline(always)]
    pub fn advance(&mut self, target: u32) -> Result<u32, IndexError> {
        if self.doc >= target && self.docs_decoded {
            return Ok(self.doc);
        }
        if target <= self.entry.last_doc && self.docs_decoded {
            self.gallop(target);
            return Ok(self.doc);
        }
        self.advance_slow(target)
    }

    /// `advance` for a target past the current block (or in a block not decoded yet).
    #[inline(never)]
    fn advance_slow(&mut self, target: u32) -> Result<u32, IndexError> {
        if self.doc == NO_MORE_DOCS {
            return Ok(NO_MORE_DOCS);
        }
        if target <= self.entry.last_doc {
            // The current block, not decoded yet (entered by `seek_block` or `load_freqs`).
            if !self.docs_decoded {
                self.decode_docs()?;
            }
            if self.doc < target {
                self.gallop(target);
            }
            return Ok(self.doc);
        }
        let Some(block) = self.block_for(target) else {
            self.exhaust();
            return Ok(NO_MORE_DOCS);
        };
        self.enter_block(block);
        self.decode_docs()?;
        if self.docs[0] >= target {
            self.doc = self.docs[0];
        } else {
            self.gallop(target);
        }
        Ok(self.doc)
    }

    /// The first block after the current one whose last DID is at least `target`, if any.
    fn block_for(&self, target: u32) -> Option<usize> {
        let mut block = self.block + 1;
        // Gallop over the last DIDs, then search the bracket found.
        let blocks = self.blocks();
        let mut step = 1;
        let mut low = block; // every block before `low` ends before `target`
        loop {
            let probe = low + step - 1;
            if probe >= blocks {
                block = blocks;
                break;
            }
            if SkipEntry::last_doc_of(&self.skips[probe]) >= target {
                block = probe;
                break;
            }
            low = probe + 1;
            step *= 2;
        }
        // The first block in low..=block (or low..blocks) ending at or after `target`.
        let bracket = &self.skips[low..block.min(blocks)];
        block = low + bracket.partition_point(|e| SkipEntry::last_doc_of(e) < target);
        (block < blocks).then_some(block)
    }

    /// Moves to the block that may hold `target` without decoding it: the current block when
    /// `target` is at most its last DID (the cursor stays where it is), else the first later
    /// block whose last DID is at least `target`, on its first posting. Returns `false`,
    /// exhausting the cursor, when no block is left. Then [`TermCursor::dense_words`] may
    /// answer membership in the block without decoding it; [`TermCursor::advance`] decodes
    /// it.
    pub fn seek_block(&mut self, target: u32) -> bool {
        if self.doc == NO_MORE_DOCS {
            return false;
        }
        if target <= self.entry.last_doc {
            return true;
        }
        match self.block_for(target) {
            Some(block) => {
                self.enter_block(block);
                true
            }
            None => {
                self.exhaust();
                false
            }
        }
    }

    /// Whether the list holds `doc`, at or after the current posting: `advance(doc) == doc`,
    /// except that a block stored as a bitset answers with a bit test and stays undecoded (the
    /// cursor then stays before `doc`, on a posting of that block). For membership tests of
    /// candidates much sparser than the list, where decoding a block of 256 DIDs to test one
    /// or two of them is most of the work.
    pub fn holds(&mut self, doc: u32) -> Result<bool, IndexError> {
        self.holds_then(doc, false)
    }

    /// [`TermCursor::holds`] that, when the list holds `doc`, leaves the cursor on it (a
    /// block stored as a bitset still undecoded), so that [`TermCursor::freq`] and
    /// [`TermCursor::score`] read its posting: its place in the block is the count of the bits
    /// set before it.
    pub fn holds_and_stays(&mut self, doc: u32) -> Result<bool, IndexError> {
        self.holds_then(doc, true)
    }

    fn holds_then(&mut self, doc: u32, stay: bool) -> Result<bool, IndexError> {
        if self.doc >= doc {
            return Ok(self.doc == doc);
        }
        if !self.seek_block(doc) {
            return Ok(false);
        }
        let first = self.entry.first_doc;
        let Some(words) = self.dense_words()? else {
            return Ok(self.advance(doc)? == doc);
        };
        let Some(k) = doc.checked_sub(first) else {
            return Ok(false);
        };
        if bitset_filter::test(words, k) != Some(true) {
            return Ok(false);
        }
        if stay {
            self.pos = bitset_filter::rank(words, k);
            self.doc = doc;
        }
        Ok(true)
    }

    /// The current block's bitset when its DIDs are stored as one (bit `k` of the
    /// little-endian 64-bit words for DID `first_doc + k` of [`TermCursor::current_entry`]),
    /// read in place; `None` for a block stored otherwise, or read from a decoded copy.
    /// The block is checked once (its bits against its length); later calls slice it.
    pub fn dense_words(&mut self) -> Result<Option<&[u8]>, IndexError> {
        if self.direct.is_some() || self.doc == NO_MORE_DOCS {
            return Ok(None);
        }
        let input = Self::docs_input(&self.held, self.bytes, self.block, &self.entry)
            .ok_or_else(|| self.corrupt())?;
        if self.dense.is_none() {
            let words = self
                .segment
                .codec()
                .dense_docs(input, self.len)
                .map_err(|source| self.codec_error(source))?;
            self.dense = Some(words.map(|words| {
                let start = words.as_ptr() as usize - input.as_ptr() as usize;
                start..start + words.len()
            }));
        }
        Ok(self.dense.clone().flatten().map(|range| &input[range]))
    }

    /// Within the decoded block, whose last DID is at least `target` and whose current DID is
    /// below it: moves to the first DID at least `target`. Targets of an intersection are
    /// usually near, so the next [`PROBE`] DIDs are compared at once (a vector compare)
    /// before the rest are counted ([`sorted_search::count_below`]).
    #[inline]
    fn gallop(&mut self, target: u32) {
        let pos = self.pos + 1;
        let probe: &[u32; PROBE] = self.docs[pos..pos + PROBE].try_into().expect("padded");
        let below = probe
            .iter()
            .map(|&d| usize::from(d < target))
            .sum::<usize>();
        self.pos = if below < PROBE {
            pos + below
        } else {
            let rest = &self.docs[pos + PROBE..self.len];
            pos + PROBE + sorted_search::count_below(rest, target, self.isa)
        };
        self.doc = self.docs[self.pos];
    }

    /// The DIDs of the current block from the current posting on (empty once exhausted).
    #[inline]
    pub fn block_rest(&self) -> &[u32] {
        debug_assert!(self.docs_decoded || self.doc == NO_MORE_DOCS);
        if self.doc == NO_MORE_DOCS {
            return &[];
        }
        &self.docs[self.pos..self.len]
    }

    /// The DIDs of the current block (decoded), from its first posting; empty once exhausted.
    #[inline]
    pub fn block_docs(&self) -> &[u32] {
        debug_assert!(self.docs_decoded || self.doc == NO_MORE_DOCS);
        if self.doc == NO_MORE_DOCS {
            return &[];
        }
        &self.docs[..self.len]
    }

    /// The skip entry of the current block.
    #[inline]
    pub fn current_entry(&self) -> SkipEntry {
        self.entry
    }

    /// The current block's DIDs and frequencies (decoding the frequencies if needed) and the
    /// index of the current posting in them; the cursor does not move.
    pub fn current_block(&mut self) -> Result<(&[u32], &[u32], usize), IndexError> {
        if !self.docs_decoded {
            self.decode_docs()?;
        }
        if !self.freqs_decoded {
            self.decode_freqs()?;
        }
        Ok((&self.docs[..self.len], &self.freqs[..self.len], self.pos))
    }

    /// Index of the current block.
    #[inline]
    pub fn block_index(&self) -> usize {
        self.block
    }

    /// Index of the current posting in its block.
    #[inline]
    pub fn block_position(&self) -> usize {
        self.pos
    }

    /// [`TermCursor::block_rest`] with the frequencies of those postings, decoding them if
    /// needed.
    #[inline]
    pub fn block_rest_with_freqs(&mut self) -> Result<(&[u32], &[u32]), IndexError> {
        if self.doc == NO_MORE_DOCS {
            return Ok((&[], &[]));
        }
        if !self.docs_decoded {
            self.decode_docs()?;
        }
        if !self.freqs_decoded {
            self.decode_freqs()?;
        }
        Ok((
            &self.docs[self.pos..self.len],
            &self.freqs[self.pos..self.len],
        ))
    }

    /// The frequencies of the current block (DIDs decoded), decoding them if needed.
    #[inline]
    pub fn block_freqs(&mut self) -> Result<&[u32], IndexError> {
        if !self.freqs_decoded {
            self.decode_freqs()?;
        }
        Ok(&self.freqs[..self.len])
    }

    /// Writes to `out[k]` the frequency of the current block's posting `places[k]` (each below
    /// the block's length). A few are read from the encoded block one by one
    /// ([`apcache_codec::BlockCodec::select_freqs`]); more than [`SELECT_MAX`], or a block
    /// whose frequencies are decoded already, are taken from the decoded block.
    pub fn select_freqs(&mut self, places: &[u16], out: &mut [u32]) -> Result<(), IndexError> {
        if self.freqs_decoded || places.len() > SELECT_MAX {
            let freqs = self.block_freqs()?;
            for (f, &place) in out.iter_mut().zip(places) {
                *f = freqs[usize::from(place)];
            }
            return Ok(());
        }
        if let Some(direct) = &self.direct {
            let (start, freqs) = (self.block * BLOCK_LEN, direct.freqs());
            for (f, &place) in out.iter_mut().zip(places) {
                *f = freqs[start + usize::from(place)];
            }
            return Ok(());
        }
        let input = self.freq_bytes()?;
        self.segment
            .codec()
            .select_freqs(input, self.len, places, out)
            .map_err(|source| self.codec_error(source))?;
        for f in &mut out[..places.len()] {
            *f = f.wrapping_add(1);
        }
        Ok(())
    }

    /// Moves `n` postings ahead inside the current block, stopping at its last posting (never
    /// decoding the next block); for evaluators that have read ahead in [`TermCursor::block_rest`]
    /// and know later targets lie beyond what they read.
    #[inline]
    pub fn step_within_block(&mut self, n: usize) {
        debug_assert!(self.docs_decoded || self.doc == NO_MORE_DOCS);
        if self.doc == NO_MORE_DOCS {
            return;
        }
        self.pos = (self.pos + n).min(self.len - 1);
        self.doc = self.docs[self.pos];
    }

    /// Moves `n` postings ahead inside the current block ([`TermCursor::block_rest`] shrinks
    /// by `n`); past its end, to the first posting of the next block.
    #[inline]
    pub fn consume(&mut self, n: usize) -> Result<u32, IndexError> {
        debug_assert!(self.docs_decoded || self.doc == NO_MORE_DOCS);
        self.pos += n;
        if self.pos < self.len {
            self.doc = self.docs[self.pos];
            return Ok(self.doc);
        }
        self.pos = self.len - 1;
        self.next_block()
    }

    /// Frequency of the current posting.
    #[inline(always)]
    pub fn freq(&mut self) -> Result<u32, IndexError> {
        if !self.freqs_decoded {
            self.decode_freqs()?;
        }
        Ok(self.freqs[self.pos])
    }

    /// BM25 score of the current posting.
    #[inline(always)]
    pub fn score(&mut self, bm25: &Bm25) -> Result<f32, IndexError> {
        // A filter's clause weighs 0 and scores 0 whatever its frequency and length: neither
        // is read.
        if self.weight == 0.0 {
            return Ok(0.0);
        }
        let freq = self.freq()?;
        if let Some(field) = &self.field {
            let length = field.lengths.of(self.doc);
            return Ok(field.bm25.score(self.weight, freq, length));
        }
        let length = self.segment.doc_length_of(self.doc).unwrap_or(0);
        Ok(bm25.score(self.weight, freq, length))
    }

    /// BM25 score of the current posting in a document whose length normalisation is
    /// `inverse` ([`Bm25::norm_inverse`]), for evaluators that score several terms of one
    /// document; equal to [`TermCursor::score`].
    #[inline(always)]
    pub fn score_with_inverse(&mut self, bm25: &Bm25, inverse: f32) -> Result<f32, IndexError> {
        let freq = self.freq()?;
        Ok(bm25.score_of_inverse(self.weight, freq, inverse))
    }

    /// Decodes block `block` (after the current one, or the current one) whole, DIDs and
    /// frequencies, and leaves the cursor on its first posting; for evaluators that work a
    /// block at a time.
    pub fn load_block(&mut self, block: usize) -> Result<(&[u32], &[u32]), IndexError> {
        if block != self.block {
            self.enter_block(block);
        }
        if !self.docs_decoded {
            self.decode_docs()?;
        }
        if !self.freqs_decoded {
            self.decode_freqs()?;
        }
        self.pos = 0;
        self.doc = self.docs[0];
        Ok((&self.docs[..self.len], &self.freqs[..self.len]))
    }

    /// Goes back to the first posting, where a new cursor stands, shallow position included:
    /// for an evaluator that read the list ahead (the seed of a top k's threshold), without
    /// opening the term again, which a postings source would count as a second use.
    pub fn rewind(&mut self) -> Result<(), IndexError> {
        self.shallow = 0;
        self.shallow_entry = self.entry(0);
        self.shallow_bound = None;
        if self.block != 0 {
            self.enter_block(0);
        }
        if !self.docs_decoded {
            self.decode_docs()?;
        }
        self.pos = 0;
        self.doc = self.docs[0];
        Ok(())
    }

    /// Decodes the frequencies of block `block` (after the current one, or the current one)
    /// and enters it without decoding its DIDs, so that an evaluator can reject a block on its
    /// frequencies alone; [`TermCursor::load_block`] then decodes the DIDs. A block whose DIDs
    /// are never decoded counts as skipped in [`TermCursor::stats`].
    pub fn load_freqs(&mut self, block: usize) -> Result<&[u32], IndexError> {
        if block != self.block {
            self.enter_block(block);
        }
        if !self.freqs_decoded {
            self.decode_freqs()?;
        }
        Ok(&self.freqs[..self.len])
    }

    /// Hands the DIDs of every block from the current one on to `each` and exhausts the
    /// cursor; for counting. A block the codec stores as a bitset goes as it is stored
    /// ([`BlockDids::Bits`]) instead of being decoded: a union count ORs it in a word at a
    /// time.
    pub fn for_each_block(
        &mut self,
        mut each: impl FnMut(BlockDids<'_>),
    ) -> Result<(), IndexError> {
        if self.doc == NO_MORE_DOCS {
            return Ok(());
        }
        if !self.docs_decoded {
            self.decode_docs()?;
        }
        each(BlockDids::Docs(&self.docs[self.pos..self.len]));
        for block in self.block + 1..self.blocks() {
            self.enter_block(block);
            if self.direct.is_none() {
                let input = Self::docs_input(&self.held, self.bytes, self.block, &self.entry)
                    .ok_or_else(|| self.corrupt())?;
                let dense = self
                    .segment
                    .codec()
                    .dense_docs(input, self.len)
                    .map_err(|source| self.codec_error(source))?;
                if let Some(words) = dense {
                    // What `decode_docs` checks for a block it decodes.
                    super::cancel::check()?;
                    each(BlockDids::Bits {
                        first: self.entry.first_doc,
                        words,
                    });
                    self.blocks_decoded += 1;
                    self.postings_decoded += self.len as u64;
                    continue;
                }
            }
            self.decode_docs()?;
            each(BlockDids::Docs(&self.docs[..self.len]));
        }
        self.exhaust();
        Ok(())
    }

    /// Lets block bounds use the skip entries' best postings: only for a `bm25` that ranks
    /// postings as the segment's own does ([`Bm25::same_ranking`]), where the best posting's
    /// score is the block's exact maximum.
    pub fn use_best_postings(&mut self, allowed: bool) {
        self.best_postings = allowed;
        self.shallow_bound = None;
    }

    /// The score bound of a block's entry.
    #[inline]
    pub fn entry_bound(&self, entry: &SkipEntry, bm25: &Bm25) -> f32 {
        let bm25 = self.scorer(bm25);
        if self.best_postings {
            bm25.score_of_norm(self.weight, entry.best_freq, entry.best_norm)
        } else {
            bm25.score_of_norm(self.weight, entry.max_freq, entry.min_norm)
        }
    }

    /// The highest score any posting of the term can have.
    pub fn max_score(&self, bm25: &Bm25) -> f32 {
        let mut max = 0f32;
        for block in 0..self.blocks() {
            max = max.max(self.entry_bound(&self.entry(block), bm25));
        }
        max
    }

    /// The highest score bound of the blocks that hold DIDs in `start..=up_to`, moving the
    /// shallow position to the first of them ([`TermCursor::shallow_advance`]); `None` when no
    /// block ends at or after `start`.
    pub fn max_bound_through(&mut self, start: u32, up_to: u32, bm25: &Bm25) -> Option<f32> {
        let (mut last, mut bound) = self.shallow_advance(start, bm25)?;
        let mut block = self.shallow + 1;
        while last < up_to && block < self.blocks() {
            let entry = self.entry(block);
            if entry.first_doc > up_to {
                break;
            }
            bound = bound.max(self.entry_bound(&entry, bm25));
            last = entry.last_doc;
            block += 1;
        }
        Some(bound)
    }

    /// Moves the shallow position to the block that holds (or follows) `target`, without
    /// touching the current posting; returns that block's last DID and score bound, or
    /// `None` past the last block.
    #[inline]
    pub fn shallow_advance(&mut self, target: u32, bm25: &Bm25) -> Option<(u32, f32)> {
        if self.shallow < self.block {
            self.shallow = self.block;
            self.shallow_entry = self.entry;
            self.shallow_bound = None;
        }
        if self.shallow_entry.last_doc < target {
            // Usually the next block or the one after; else search the rest.
            let rest = &self.skips[self.shallow + 1..];
            let near = rest.len().min(2);
            let ahead = match rest[..near]
                .iter()
                .position(|e| SkipEntry::last_doc_of(e) >= target)
            {
                Some(i) => i,
                None => near + rest[near..].partition_point(|e| SkipEntry::last_doc_of(e) < target),
            };
            if ahead >= rest.len() {
                return None;
            }
            self.shallow += 1 + ahead;
            self.shallow_entry = self.entry(self.shallow);
            self.shallow_bound = None;
        }
        let scorer = std::ptr::from_ref(bm25) as usize;
        let bound = match self.shallow_bound {
            Some((by, bound)) if by == scorer => bound,
            _ => {
                let bound = self.entry_bound(&self.shallow_entry, bm25);
                self.shallow_bound = Some((scorer, bound));
                bound
            }
        };
        Some((self.shallow_entry.last_doc, bound))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::indexer::{build_index_from_documents, IndexOptions};
    use crate::ingest::Document;
    use crate::search::IndexReader;

    /// Every (DID, frequency) of `cursor` from where it stands.
    fn postings(cursor: &mut TermCursor<'_>) -> Vec<(u32, u32)> {
        let mut out = Vec::new();
        while cursor.doc() != NO_MORE_DOCS {
            out.push((cursor.doc(), cursor.freq().unwrap()));
            cursor.next_doc().unwrap();
        }
        out
    }

    /// A rewound cursor reads its list as a new one does, after reading it block by block,
    /// after advancing part way, and after reaching its end; for lists of one and of several
    /// blocks.
    #[test]
    fn a_rewound_cursor_reads_what_a_new_one_reads() {
        let documents: Vec<Document> = (0..1500)
            .map(|i| Document {
                id: Some(i.to_string()),
                title: String::new(),
                body: match i % 7 {
                    0 => "alpha beta beta".to_string(),
                    1 => "alpha".to_string(),
                    _ if i % 97 == 0 => "gamma alpha".to_string(),
                    _ => "delta".to_string(),
                },
                json: None,
            })
            .collect();
        let dir = tempfile::tempdir().unwrap();
        build_index_from_documents(&documents, dir.path(), &IndexOptions::default(), |_, _| {})
            .unwrap();
        let reader = IndexReader::open(dir.path()).unwrap();
        let segment = &reader.segments()[0];
        for term in ["alpha", "beta", "gamma"] {
            let entry = segment.lookup(term).unwrap().unwrap();
            let fresh = postings(&mut TermCursor::new(segment, entry, 1.0).unwrap());
            let mut cursor = TermCursor::new(segment, entry, 1.0).unwrap();
            for block in 0..cursor.blocks() {
                cursor.load_block(block).unwrap();
            }
            cursor.rewind().unwrap();
            assert_eq!(
                postings(&mut cursor),
                fresh,
                "{term}: after reading every block"
            );
            cursor.rewind().unwrap();
            cursor.advance(fresh[fresh.len() / 2].0).unwrap();
            cursor.rewind().unwrap();
            assert_eq!(postings(&mut cursor), fresh, "{term}: after advancing");
            cursor.rewind().unwrap();
            assert_eq!(postings(&mut cursor), fresh, "{term}: after the end");
        }
    }
}
