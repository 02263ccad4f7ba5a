//! A cursor over one term's postings in one segment, block by block.
//!
//! The skip entries are the cursor's map: `advance` compares a target with the blocks' last
//! DIDs and decodes only the block that may hold it (the seeds' skip-list intersection);
//! frequencies are decoded only when a score is asked for; and the skip entries' maximum
//! frequency and minimum length give each block's score bound without decoding it.

use apcache_codec::BLOCK_LEN;

use super::bm25::Bm25;
use crate::format::{SkipEntry, TermInfo};
use crate::segment::SegmentReader;
use crate::IndexError;

/// DID of an exhausted cursor.
pub const NO_MORE_DOCS: u32 = u32::MAX;

/// One term's postings in one segment.
pub struct TermCursor<'a> {
    segment: &'a SegmentReader,
    info: TermInfo,
    bytes: &'a [u8],
    /// Score weight (IDF) of the term.
    weight: f32,
    blocks: usize,
    /// Current block, its skip entry, and whether its DIDs / freqs are decoded.
    block: usize,
    entry: SkipEntry,
    docs_decoded: bool,
    freqs_decoded: bool,
    len: usize,
    pos: usize,
    doc: u32,
    docs: Box<[u32; BLOCK_LEN]>,
    freqs: Box<[u32; BLOCK_LEN]>,
    /// Shallow position: the block whose bound [`TermCursor::block_max_score`] reports.
    shallow: usize,
    shallow_entry: SkipEntry,
    /// The decoded list, when the segment was loaded direct.
    direct: Option<(&'a [u32], &'a [u32])>,
    /// Whether block bounds may use the skip entries' best postings (the query scores as the
    /// segment chose them), else the looser (max freq, min length) pair.
    best_postings: bool,
}

impl<'a> TermCursor<'a> {
    /// A cursor before the first posting of `info`.
    pub fn new(
        segment: &'a SegmentReader,
        info: TermInfo,
        weight: f32,
    ) -> Result<TermCursor<'a>, IndexError> {
        let bytes = segment.postings_bytes(&info)?;
        let blocks = info.blocks();
        let entry = segment.skip_entry(&info, 0)?;
        let mut cursor = TermCursor {
            segment,
            info,
            bytes,
            weight,
            blocks,
            block: 0,
            entry,
            docs_decoded: false,
            freqs_decoded: false,
            len: BLOCK_LEN.min(info.doc_freq as usize),
            pos: 0,
            doc: 0,
            docs: Box::new([0; BLOCK_LEN]),
            freqs: Box::new([0; BLOCK_LEN]),
            shallow: 0,
            shallow_entry: entry,
            direct: segment.direct().and_then(|d| d.list(&info)),
            best_postings: false,
        };
        cursor.decode_docs()?;
        cursor.doc = cursor.docs[0];
        Ok(cursor)
    }

    /// Documents holding the term in this segment.
    pub fn doc_freq(&self) -> u32 {
        self.info.doc_freq
    }

    /// The term's weight.
    pub fn weight(&self) -> f32 {
        self.weight
    }

    /// The current DID, or [`NO_MORE_DOCS`].
    #[inline]
    pub fn doc(&self) -> u32 {
        self.doc
    }

    fn decode_docs(&mut self) -> Result<(), IndexError> {
        if let Some((docs, _)) = self.direct {
            let start = self.block * BLOCK_LEN;
            self.docs[..self.len].copy_from_slice(&docs[start..start + self.len]);
            self.docs_decoded = true;
            self.freqs_decoded = false;
            return Ok(());
        }
        let at = self.entry.docs_offset as usize;
        let input = self.bytes.get(at..).ok_or_else(|| self.corrupt())?;
        self.segment
            .codec()
            .decode_docs(self.entry.first_doc, input, &mut self.docs[..self.len])
            .map_err(|source| IndexError::Codec {
                file: self.segment.meta().name.clone(),
                source,
            })?;
        self.docs_decoded = true;
        self.freqs_decoded = false;
        Ok(())
    }

    fn decode_freqs(&mut self) -> Result<(), IndexError> {
        if let Some((_, freqs)) = self.direct {
            let start = self.block * BLOCK_LEN;
            self.freqs[..self.len].copy_from_slice(&freqs[start..start + self.len]);
            self.freqs_decoded = true;
            return Ok(());
        }
        let at = self.entry.freqs_offset as usize;
        let input = self.bytes.get(at..).ok_or_else(|| self.corrupt())?;
        self.segment
            .codec()
            .decode_freqs(input, &mut self.freqs[..self.len])
            .map_err(|source| IndexError::Codec {
                file: self.segment.meta().name.clone(),
                source,
            })?;
        for f in &mut self.freqs[..self.len] {
            *f = f.wrapping_add(1);
        }
        self.freqs_decoded = true;
        Ok(())
    }

    fn corrupt(&self) -> IndexError {
        IndexError::corrupt(&self.segment.meta().name, "block offset past the term")
    }

    /// Moves to block `block` (after the current one) without decoding it.
    fn enter_block(&mut self, block: usize) -> Result<(), IndexError> {
        self.block = block;
        self.entry = if block == self.shallow {
            self.shallow_entry
        } else {
            self.segment.skip_entry(&self.info, block)?
        };
        self.len = BLOCK_LEN.min(self.info.doc_freq as usize - block * BLOCK_LEN);
        self.pos = 0;
        self.docs_decoded = false;
        self.freqs_decoded = false;
        Ok(())
    }

    /// Moves to the next posting; returns its DID or [`NO_MORE_DOCS`].
    #[inline]
    pub fn next_doc(&mut self) -> Result<u32, IndexError> {
        if self.doc == NO_MORE_DOCS {
            return Ok(NO_MORE_DOCS);
        }
        self.pos += 1;
        if self.pos < self.len {
            self.doc = self.docs[self.pos];
            return Ok(self.doc);
        }
        self.next_block()
    }

    #[cold]
    fn next_block(&mut self) -> Result<u32, IndexError> {
        if self.block + 1 >= self.blocks {
            self.doc = NO_MORE_DOCS;
            return Ok(NO_MORE_DOCS);
        }
        self.enter_block(self.block + 1)?;
        self.decode_docs()?;
        self.doc = self.docs[0];
        Ok(self.doc)
    }

    /// Moves to the first posting with DID at least `target` (never backwards); returns its
    /// DID or [`NO_MORE_DOCS`]. Blocks that end before `target` are skipped undecoded.
    #[inline]
    pub fn advance(&mut self, target: u32) -> Result<u32, IndexError> {
        if self.doc >= target {
            return Ok(self.doc);
        }
        if target > self.entry.last_doc {
            let mut block = self.block + 1;
            loop {
                if block >= self.blocks {
                    self.doc = NO_MORE_DOCS;
                    return Ok(NO_MORE_DOCS);
                }
                let entry = self.segment.skip_entry(&self.info, block)?;
                if entry.last_doc >= target {
                    break;
                }
                block += 1;
            }
            self.enter_block(block)?;
        }
        if !self.docs_decoded {
            self.decode_docs()?;
        }
        // The block holds a DID >= target: find the first.
        let start = self.pos;
        let offset = self.docs[start..self.len].partition_point(|&d| d < target);
        self.pos = start + offset;
        self.doc = self.docs[self.pos];
        Ok(self.doc)
    }

    /// Frequency of the current posting.
    #[inline]
    pub fn freq(&mut self) -> Result<u32, IndexError> {
        if !self.freqs_decoded {
            self.decode_freqs()?;
        }
        Ok(self.freqs[self.pos])
    }

    /// BM25 score of the current posting.
    #[inline]
    pub fn score(&mut self, bm25: &Bm25) -> Result<f32, IndexError> {
        let freq = self.freq()?;
        let length = self.segment.doc_length_of(self.doc).unwrap_or(0);
        Ok(bm25.score(self.weight, freq, length))
    }

    /// Lets block bounds use the skip entries' best postings: only for a `bm25` that ranks
    /// postings as the segment's own does ([`Bm25::same_ranking`]), where the best posting's
    /// score is the block's exact maximum.
    pub fn use_best_postings(&mut self, allowed: bool) {
        self.best_postings = allowed;
    }

    /// The score bound of a block's entry.
    pub fn entry_bound(&self, entry: &SkipEntry, bm25: &Bm25) -> f32 {
        if self.best_postings {
            bm25.score(self.weight, entry.best_freq, entry.best_doc_len)
        } else {
            bm25.score(self.weight, entry.max_freq, entry.min_doc_len)
        }
    }

    /// The highest score any posting of the term can have.
    pub fn max_score(&self, bm25: &Bm25) -> Result<f32, IndexError> {
        let mut max = 0f32;
        for block in 0..self.blocks {
            let entry = self.segment.skip_entry(&self.info, block)?;
            max = max.max(self.entry_bound(&entry, bm25));
        }
        Ok(max)
    }

    /// Moves the shallow position to the block that holds (or follows) `target`, without
    /// touching the current posting; returns that block's last DID and score bound, or
    /// `None` past the last block.
    pub fn shallow_advance(
        &mut self,
        target: u32,
        bm25: &Bm25,
    ) -> Result<Option<(u32, f32)>, IndexError> {
        if self.shallow < self.block {
            self.shallow = self.block;
            self.shallow_entry = self.entry;
        }
        while self.shallow_entry.last_doc < target {
            if self.shallow + 1 >= self.blocks {
                return Ok(None);
            }
            self.shallow += 1;
            self.shallow_entry = self.segment.skip_entry(&self.info, self.shallow)?;
        }
        Ok(Some((
            self.shallow_entry.last_doc,
            self.entry_bound(&self.shallow_entry, bm25),
        )))
    }
}
