//! The doc index: which of a column's values belong to which document, and the block table.
//!
//! A column's values are numbered `0..value count` in document order (a document's values
//! together, sorted). The doc index maps a document to its range of value numbers, in one of
//! three layouts, the smallest that fits:
//!
//! - **one per document**: every document has exactly one value, value `d` is document `d`'s;
//!   nothing is stored per document (the common case of a field every document has);
//! - **at most one**: a presence bitset, one bit per document; a document's value number is
//!   its block's value start plus the set bits before it in its block (at most four words);
//! - **any**: per document, bit-packed, the number of values of its block up to and including
//!   it (so a block's offsets are small, whatever the column's size).
//!
//! Every 256 documents have a block entry: the number of the block's first value, followed by
//! the block's smallest and largest value (what they are is the column kind's business; a
//! block without values has meaningless bounds). A range filter reads the bounds and skips the
//! block, takes all its documents with a value, or scans their values ([`DocIndex::matching`]).
//!
//! ```text
//! doc index: layout u8 | offsets width u8 | docs with value u32 | value count u64 |
//!            block × ceil(documents / 256) | documents
//! block:     value start u64 | bounds (kind's, `entry_len` bytes)
//! documents: one per document: nothing
//!            at most one:      bitset u64 × ceil(documents / 64)
//!            any:              end offset × documents, bit-packed at offsets width
//! ```
//!
//! [`DocIndex::parse`] checks the block starts (from 0, never decreasing, none past the value
//! count, and what the layout implies) and the areas' lengths. It does not read the bitset or
//! the offsets: a read clamps what it finds there to the document's block, so damage there
//! gives wrong answers, never an out-of-bounds read or a read longer than the block.

use std::ops::Range;

use super::bit_packing::{get, load, packed_len, width_of, BitWriter};
use super::reader::Cursor;
use super::{ColumnsError, BLOCK_DOCS};

/// Bytes of a block entry before its bounds: the value start.
const START_LEN: usize = 8;

/// Documents per word of the bitset and of a match set.
const WORD_DOCS: u32 = 64;

/// How a column's documents map to their values.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Layout {
    OnePerDoc,
    AtMostOne,
    Any,
}

impl Layout {
    fn code(self) -> u8 {
        match self {
            Layout::OnePerDoc => 0,
            Layout::AtMostOne => 1,
            Layout::Any => 2,
        }
    }

    fn from_code(code: u8) -> Option<Layout> {
        match code {
            0 => Some(Layout::OnePerDoc),
            1 => Some(Layout::AtMostOne),
            2 => Some(Layout::Any),
            _ => None,
        }
    }
}

/// Writes the doc index of values whose documents are `docs` (value `i` belongs to document
/// `docs[i]`; non-decreasing, all below `doc_count`). `bounds` appends a block's bounds given
/// the range of its value numbers (empty for a block without values).
pub(super) fn encode(
    docs: &[u32],
    doc_count: u32,
    out: &mut Vec<u8>,
    mut bounds: impl FnMut(Range<usize>, &mut Vec<u8>),
) {
    let value_count = docs.len();
    let docs_with_value = docs.chunk_by(|a, b| a == b).count();
    let layout = if value_count == doc_count as usize && docs_with_value == value_count {
        Layout::OnePerDoc
    } else if docs_with_value == value_count {
        Layout::AtMostOne
    } else {
        Layout::Any
    };
    let blocks = doc_count.div_ceil(BLOCK_DOCS);
    let starts: Vec<usize> = (0..=blocks)
        .map(|b| docs.partition_point(|&d| u64::from(d) < u64::from(b) * u64::from(BLOCK_DOCS)))
        .collect();
    let offsets_width = match layout {
        Layout::Any => width_of(
            starts
                .windows(2)
                .map(|w| (w[1] - w[0]) as u64)
                .max()
                .unwrap_or(0),
        ),
        _ => 0,
    };
    out.push(layout.code());
    out.push(offsets_width);
    out.extend_from_slice(&(docs_with_value as u32).to_le_bytes());
    out.extend_from_slice(&(value_count as u64).to_le_bytes());
    for w in starts.windows(2) {
        out.extend_from_slice(&(w[0] as u64).to_le_bytes());
        bounds(w[0]..w[1], out);
    }
    match layout {
        Layout::OnePerDoc => {}
        Layout::AtMostOne => {
            let mut words = vec![0u64; doc_count.div_ceil(WORD_DOCS) as usize];
            for &doc in docs {
                words[(doc / WORD_DOCS) as usize] |= 1 << (doc % WORD_DOCS);
            }
            for word in words {
                out.extend_from_slice(&word.to_le_bytes());
            }
        }
        Layout::Any => {
            let mut writer = BitWriter::new(out, offsets_width);
            let mut next = 0;
            for doc in 0..doc_count {
                while next < docs.len() && docs[next] <= doc {
                    next += 1;
                }
                writer.push((next - starts[(doc / BLOCK_DOCS) as usize]) as u64);
            }
            writer.finish();
        }
    }
}

/// What a range filter does with a block, from its bounds.
pub(super) enum BlockTest {
    /// No value of the block is in the range.
    Skip,
    /// Every value of the block is: every document with a value matches.
    All,
    /// Some may be: test each document's values.
    Scan,
}

/// A column's doc index, its layout checked.
#[derive(Debug, Clone, Copy)]
pub(super) struct DocIndex<'a> {
    layout: Layout,
    offsets_width: u8,
    doc_count: u32,
    docs_with_value: u32,
    value_count: u64,
    /// The block entries, `START_LEN + entry_len` bytes each.
    blocks: &'a [u8],
    entry_len: usize,
    /// The bitset or the end offsets.
    documents: &'a [u8],
}

impl<'a> DocIndex<'a> {
    /// Reads the doc index of a column of `doc_count` documents whose block bounds take
    /// `entry_len` bytes.
    pub(super) fn parse(
        cursor: &mut Cursor<'a>,
        doc_count: u32,
        entry_len: usize,
    ) -> Result<DocIndex<'a>, ColumnsError> {
        let code = cursor.u8()?;
        let layout = Layout::from_code(code)
            .ok_or_else(|| cursor.error(format!("unknown layout {code}")))?;
        let offsets_width = cursor.u8()?;
        if offsets_width > 64 || (layout != Layout::Any && offsets_width != 0) {
            return Err(cursor.error(format!("offsets width {offsets_width} in layout {code}")));
        }
        let docs_with_value = cursor.u32()?;
        let value_count = cursor.u64()?;
        let block_count = u64::from(doc_count.div_ceil(BLOCK_DOCS));
        let blocks = cursor.take(block_count * (START_LEN + entry_len) as u64, "block table")?;
        let documents_len = match layout {
            Layout::OnePerDoc => Some(0),
            Layout::AtMostOne => Some(u64::from(doc_count.div_ceil(WORD_DOCS)) * 8),
            Layout::Any => packed_len(u64::from(doc_count), offsets_width),
        };
        let documents = cursor.take_opt(documents_len, "documents")?;
        let index = DocIndex {
            layout,
            offsets_width,
            doc_count,
            docs_with_value,
            value_count,
            blocks,
            entry_len,
            documents,
        };
        let consistent = docs_with_value <= doc_count
            && u64::from(docs_with_value) <= value_count
            && match layout {
                Layout::OnePerDoc => docs_with_value == doc_count,
                Layout::AtMostOne => u64::from(docs_with_value) == value_count,
                Layout::Any => true,
            }
            && (block_count > 0 || value_count == 0);
        if !consistent {
            return Err(cursor.error(format!(
                "{docs_with_value} documents with {value_count} values \
                 in layout {code} of {doc_count} documents"
            )));
        }
        let mut previous = 0;
        for block in 0..index.block_count() {
            let start = index.block_start(block);
            // A next start before this one fails the check of the next block.
            let count = index.block_end(block).saturating_sub(start);
            let docs = index.block_docs(block);
            let fits = match layout {
                Layout::OnePerDoc => start == u64::from(docs.start),
                Layout::AtMostOne => count <= u64::from(docs.end - docs.start),
                Layout::Any => offsets_width == 64 || count < 1 << offsets_width,
            };
            if start < previous || start > value_count || (block == 0 && start != 0) || !fits {
                return Err(cursor.error(format!(
                    "block {block} starts at value {start}, after {previous}, \
                     of {value_count} values in layout {code}"
                )));
            }
            previous = start;
        }
        Ok(index)
    }

    /// Documents with at least one value.
    pub(super) fn docs_with_value(&self) -> u32 {
        self.docs_with_value
    }

    /// Values of all documents.
    pub(super) fn value_count(&self) -> u64 {
        self.value_count
    }

    /// Documents of the column (the segment's).
    pub(super) fn doc_count(&self) -> u32 {
        self.doc_count
    }

    /// Blocks of [`BLOCK_DOCS`] documents (the last may have fewer).
    pub(super) fn block_count(&self) -> u32 {
        self.doc_count.div_ceil(BLOCK_DOCS)
    }

    /// The documents of block `block`.
    fn block_docs(&self, block: u32) -> Range<u32> {
        let first = block * BLOCK_DOCS;
        first..self.doc_count.min(first + BLOCK_DOCS)
    }

    /// The number of the first value of block `block`.
    fn block_start(&self, block: u32) -> u64 {
        load(self.blocks, block as usize * (START_LEN + self.entry_len))
    }

    /// Where the values of block `block` end.
    fn block_end(&self, block: u32) -> u64 {
        if block + 1 < self.block_count() {
            self.block_start(block + 1)
        } else {
            self.value_count
        }
    }

    /// The value numbers of block `block` (checked at parse: in order and within the count).
    pub(super) fn block_values(&self, block: u32) -> Range<u64> {
        self.block_start(block)..self.block_end(block)
    }

    /// The bounds of block `block`, `entry_len` bytes.
    pub(super) fn block_bounds(&self, block: u32) -> &'a [u8] {
        let at = block as usize * (START_LEN + self.entry_len) + START_LEN;
        self.blocks.get(at..at + self.entry_len).unwrap_or(&[])
    }

    /// The value numbers of document `doc`: empty for a document without values or past the
    /// column's documents.
    pub(super) fn values_of(&self, doc: u32) -> Range<u64> {
        if doc >= self.doc_count {
            return 0..0;
        }
        let block = doc / BLOCK_DOCS;
        let values = self.block_values(block);
        match self.layout {
            Layout::OnePerDoc => u64::from(doc)..u64::from(doc) + 1,
            Layout::AtMostOne => {
                let word_index = doc / WORD_DOCS;
                let word = self.word(word_index);
                let bit = doc % WORD_DOCS;
                if word >> bit & 1 == 0 {
                    return 0..0;
                }
                let before: u64 = (block * (BLOCK_DOCS / WORD_DOCS)..word_index)
                    .map(|w| u64::from(self.word(w).count_ones()))
                    .sum();
                let at = values.start + before + u64::from((word & ((1 << bit) - 1)).count_ones());
                if at < values.end {
                    at..at + 1
                } else {
                    0..0
                }
            }
            Layout::Any => {
                let len = values.end - values.start;
                let end = get(self.documents, u64::from(doc), self.offsets_width).min(len);
                let start = if doc.is_multiple_of(BLOCK_DOCS) {
                    0
                } else {
                    get(self.documents, u64::from(doc - 1), self.offsets_width).min(end)
                };
                values.start + start..values.start + end
            }
        }
    }

    /// Word `word` of the presence bitset, without bits past the last document.
    fn word(&self, word: u32) -> u64 {
        load(self.documents, word as usize * 8) & self.word_mask(word)
    }

    /// The bits of word `word` that are documents of the column.
    fn word_mask(&self, word: u32) -> u64 {
        let first = word * WORD_DOCS;
        match self.doc_count.saturating_sub(first) {
            n if n >= WORD_DOCS => u64::MAX,
            n => (1 << n) - 1,
        }
    }

    /// Calls `f` with each document of block `block` that has values, and their value numbers.
    fn for_each_doc(&self, block: u32, mut f: impl FnMut(u32, Range<u64>)) {
        let values = self.block_values(block);
        let docs = self.block_docs(block);
        match self.layout {
            Layout::OnePerDoc => {
                for doc in docs {
                    f(doc, u64::from(doc)..u64::from(doc) + 1);
                }
            }
            Layout::AtMostOne => {
                let mut at = values.start;
                for word_index in docs.start / WORD_DOCS..docs.end.div_ceil(WORD_DOCS) {
                    let mut word = self.word(word_index);
                    while word != 0 && at < values.end {
                        f(word_index * WORD_DOCS + word.trailing_zeros(), at..at + 1);
                        at += 1;
                        word &= word - 1;
                    }
                }
            }
            Layout::Any => {
                let len = values.end - values.start;
                let mut previous = 0;
                for doc in docs {
                    let end = get(self.documents, u64::from(doc), self.offsets_width)
                        .clamp(previous, len.max(previous));
                    if end > previous {
                        f(doc, values.start + previous..values.start + end);
                    }
                    previous = end;
                }
            }
        }
    }

    /// Sets, in `out`, the bit of each document whose values `test` accepts, skipping or
    /// taking whole blocks as `block_test` says from their bounds; returns how many it set
    /// (documents past `out`'s bits are left out).
    pub(super) fn matching(
        &self,
        out: &mut [u64],
        mut block_test: impl FnMut(u32) -> BlockTest,
        mut test: impl FnMut(Range<u64>) -> bool,
    ) -> u64 {
        let mut count = 0;
        for block in 0..self.block_count() {
            if self.block_values(block).is_empty() {
                continue;
            }
            match block_test(block) {
                BlockTest::Skip => {}
                BlockTest::All => count += self.set_all(block, out),
                BlockTest::Scan => self.for_each_doc(block, |doc, values| {
                    if test(values) {
                        count += set_word(out, doc / WORD_DOCS, 1 << (doc % WORD_DOCS));
                    }
                }),
            }
        }
        count
    }

    /// Sets the bit of every document of block `block` that has a value; how many it set.
    fn set_all(&self, block: u32, out: &mut [u64]) -> u64 {
        let docs = self.block_docs(block);
        let words = docs.start / WORD_DOCS..docs.end.div_ceil(WORD_DOCS);
        match self.layout {
            Layout::OnePerDoc => words.map(|w| set_word(out, w, self.word_mask(w))).sum(),
            Layout::AtMostOne => words.map(|w| set_word(out, w, self.word(w))).sum(),
            Layout::Any => {
                let mut count = 0;
                self.for_each_doc(block, |doc, _| {
                    count += set_word(out, doc / WORD_DOCS, 1 << (doc % WORD_DOCS));
                });
                count
            }
        }
    }
}

/// Sets the bits `mask` of word `word` of `out`; how many (0 past the end of `out`).
fn set_word(out: &mut [u64], word: u32, mask: u64) -> u64 {
    match out.get_mut(word as usize) {
        Some(bits) => {
            *bits |= mask;
            u64::from(mask.count_ones())
        }
        None => 0,
    }
}
