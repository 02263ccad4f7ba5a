//! A range over one column, tested a document at a time: what a range filter needs when
//! another clause leads the query, so that it reads the values of the documents that clause
//! proposes and no others (Lucene's `IndexOrDocValuesQuery` makes the same choice). Blocks
//! whose bounds miss the range are stepped over without reading their values; in blocks whose
//! bounds lie inside it, having a value is enough.

use std::ops::Range;

use super::bit_packing::get;
use super::doc_index::{BlockTest, DocIndex};
use super::BLOCK_DOCS;

/// How a column's block bounds are written.
#[derive(Debug, Clone, Copy)]
pub(super) enum Bounds {
    /// Two `i64`, the block's least and greatest value.
    Numbers,
    /// Two `u32`, the block's least and greatest ordinal.
    Ordinals,
}

/// The documents of a column with a value in a range: numbers of a numeric column, or
/// ordinals of a keyword column.
#[derive(Debug, Clone, Copy)]
pub struct RangeTest<'a> {
    index: DocIndex<'a>,
    /// The bit-packed values (numerics) or ordinals (keywords).
    values: &'a [u8],
    width: u8,
    /// The range in stored units (packed values or ordinals), inclusive.
    low: u64,
    high: u64,
    /// The range in the units of the block bounds, inclusive.
    lo: i64,
    hi: i64,
    bounds: Bounds,
}

impl<'a> RangeTest<'a> {
    /// The test of `[low, high]` in stored units, `[lo, hi]` in bound units.
    pub(super) fn new(
        index: DocIndex<'a>,
        values: &'a [u8],
        width: u8,
        (low, high): (u64, u64),
        (lo, hi): (i64, i64),
        bounds: Bounds,
    ) -> RangeTest<'a> {
        RangeTest {
            index,
            values,
            width,
            low,
            high,
            lo,
            hi,
            bounds,
        }
    }

    /// What block `block`'s bounds say of it.
    fn block_test(&self, block: u32) -> BlockTest {
        if self.index.block_values(block).is_empty() {
            return BlockTest::Skip;
        }
        let bytes = self.index.block_bounds(block);
        let (min, max) = match self.bounds {
            Bounds::Numbers => (read_i64(bytes, 0), read_i64(bytes, 8)),
            Bounds::Ordinals => (read_u32(bytes, 0), read_u32(bytes, 4)),
        };
        if max < self.lo || min > self.hi {
            BlockTest::Skip
        } else if self.lo <= min && max <= self.hi {
            BlockTest::All
        } else {
            BlockTest::Scan
        }
    }

    /// Whether any of the values `at` is in the range (a document's values ascend, so the
    /// first at or above the low end decides).
    fn any_in_range(&self, at: Range<u64>) -> bool {
        for i in at {
            let value = get(self.values, i, self.width);
            if value >= self.low {
                return value <= self.high;
            }
        }
        false
    }

    /// Sets, in `out`, the bit of each document with a value in the range (documents past
    /// `out`'s bits are left out); returns how many it set.
    pub fn matching(&self, out: &mut [u64]) -> u64 {
        self.index.matching(
            out,
            |block| self.block_test(block),
            |values| self.any_in_range(values),
        )
    }

    /// The column's documents (the segment's local documents).
    pub fn doc_count(&self) -> u32 {
        self.index.doc_count()
    }

    /// The first document at or after `from` with a value in the range.
    pub fn next_match(&self, from: u32) -> Option<u32> {
        let doc_count = self.index.doc_count();
        let mut doc = from;
        while doc < doc_count {
            let block = doc / BLOCK_DOCS;
            let end = doc_count.min((block + 1) * BLOCK_DOCS);
            match self.block_test(block) {
                BlockTest::Skip => doc = end,
                BlockTest::All => {
                    while doc < end {
                        if !self.index.values_of(doc).is_empty() {
                            return Some(doc);
                        }
                        doc += 1;
                    }
                }
                BlockTest::Scan => {
                    while doc < end {
                        if self.any_in_range(self.index.values_of(doc)) {
                            return Some(doc);
                        }
                        doc += 1;
                    }
                }
            }
        }
        None
    }

    /// An upper bound on the matches: the documents with a value in blocks whose bounds do
    /// not miss the range (for ordering a conjunction's clauses).
    pub fn cost(&self) -> u64 {
        (0..self.index.block_count())
            .filter(|&block| !matches!(self.block_test(block), BlockTest::Skip))
            .map(|block| {
                let values = self.index.block_values(block);
                let docs = doc_count_of_block(self.index.doc_count(), block);
                (values.end - values.start).min(u64::from(docs))
            })
            .sum()
    }
}

fn doc_count_of_block(doc_count: u32, block: u32) -> u32 {
    doc_count.min((block + 1) * BLOCK_DOCS) - block * BLOCK_DOCS
}

fn read_i64(bytes: &[u8], at: usize) -> i64 {
    bytes
        .get(at..at + 8)
        .and_then(|b| b.try_into().ok())
        .map_or(0, i64::from_le_bytes)
}

fn read_u32(bytes: &[u8], at: usize) -> i64 {
    bytes
        .get(at..at + 4)
        .and_then(|b| b.try_into().ok())
        .map_or(0, |b| i64::from(u32::from_le_bytes(b)))
}
