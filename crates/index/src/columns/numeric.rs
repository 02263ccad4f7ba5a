//! [`NumericColumn`]: a field's `i64` values, as offsets from the column's minimum in units of
//! their greatest common divisor, bit-packed.
//!
//! Dates at day precision are multiples of 86,400,000 ms apart, prices in cents often
//! multiples of 5 or 100, booleans 0 and 1: dividing `value − min` by the gcd of all of them
//! takes those to small integers. A value is then one bit-packed read, a multiply and an add.
//!
//! ```text
//! numeric column: doc index (block bounds: min i64 | max i64) |
//!                 value width u8 | min i64 | gcd u64 | packed × value count
//! ```
//!
//! `packed = (value − min) / gcd` as an unsigned 64-bit difference (so a column spanning all
//! of `i64` is width 64, gcd 1), at `value width` bits (0 when every value is `min`; gcd is
//! then 1). A block's bounds are its smallest and largest value; a block without values has
//! `i64::MAX, i64::MIN`.

use super::bit_packing::{get, packed_len, width_of, BitWriter};
use super::doc_index::{self, DocIndex};
use super::range_test::{Bounds, RangeTest};
use super::reader::Cursor;
use super::ColumnsError;

/// Bytes of a block's bounds.
const BOUNDS_LEN: usize = 16;

/// Appends the numeric column of `values` (of documents `docs`, see [`doc_index::encode`];
/// each document's values sorted) to `out`.
pub(super) fn encode(docs: &[u32], values: &[i64], doc_count: u32, out: &mut Vec<u8>) {
    doc_index::encode(docs, doc_count, out, |range, out| {
        let block = &values[range];
        let min = block.iter().copied().min().unwrap_or(i64::MAX);
        let max = block.iter().copied().max().unwrap_or(i64::MIN);
        out.extend_from_slice(&min.to_le_bytes());
        out.extend_from_slice(&max.to_le_bytes());
    });
    let min = values.iter().copied().min().unwrap_or(0);
    let max = values.iter().copied().max().unwrap_or(0);
    let mut gcd = 0u64;
    for &value in values {
        gcd = greatest_common_divisor(gcd, value.wrapping_sub(min) as u64);
        if gcd == 1 {
            break;
        }
    }
    let gcd = gcd.max(1);
    let width = width_of(max.wrapping_sub(min) as u64 / gcd);
    out.push(width);
    out.extend_from_slice(&min.to_le_bytes());
    out.extend_from_slice(&gcd.to_le_bytes());
    let mut writer = BitWriter::new(out, width);
    for &value in values {
        writer.push(value.wrapping_sub(min) as u64 / gcd);
    }
    writer.finish();
}

fn greatest_common_divisor(mut a: u64, mut b: u64) -> u64 {
    while b != 0 {
        (a, b) = (b, a % b);
    }
    a
}

/// A field's `i64` values, read in place.
#[derive(Debug, Clone, Copy)]
pub struct NumericColumn<'a> {
    index: DocIndex<'a>,
    packed: &'a [u8],
    width: u8,
    min: i64,
    gcd: u64,
    /// The smallest and largest value of the column, from its blocks' bounds.
    range: Option<(i64, i64)>,
}

impl<'a> NumericColumn<'a> {
    /// Reads a numeric column of `doc_count` documents, checking its layout.
    pub(super) fn parse(
        cursor: &mut Cursor<'a>,
        doc_count: u32,
    ) -> Result<NumericColumn<'a>, ColumnsError> {
        let index = DocIndex::parse(cursor, doc_count, BOUNDS_LEN)?;
        let width = cursor.u8()?;
        let min = cursor.i64()?;
        let gcd = cursor.u64()?;
        if width > 64 || gcd == 0 {
            return Err(cursor.error(format!("value width {width}, gcd {gcd}")));
        }
        let packed = cursor.take_opt(packed_len(index.value_count(), width), "values")?;
        let mut range: Option<(i64, i64)> = None;
        for block in 0..index.block_count() {
            if index.block_values(block).is_empty() {
                continue;
            }
            let (low, high) = bounds(index.block_bounds(block));
            if low > high {
                return Err(cursor.error(format!("block {block} has bounds {low} > {high}")));
            }
            range = Some(match range {
                Some((a, b)) => (a.min(low), b.max(high)),
                None => (low, high),
            });
        }
        Ok(NumericColumn {
            index,
            packed,
            width,
            min,
            gcd,
            range,
        })
    }

    /// Value number `at` of the column.
    #[inline]
    fn value(&self, at: u64) -> i64 {
        let packed = get(self.packed, at, self.width);
        self.min.wrapping_add(packed.wrapping_mul(self.gcd) as i64)
    }

    /// Replaces `out`'s contents with the values of document `doc`, in ascending order (none
    /// for a document without values or past the segment's documents).
    pub fn values(&self, doc: u32, out: &mut Vec<i64>) {
        out.clear();
        out.extend(self.index.values_of(doc).map(|at| self.value(at)));
    }

    /// The smallest value of document `doc`.
    pub fn min(&self, doc: u32) -> Option<i64> {
        let values = self.index.values_of(doc);
        (!values.is_empty()).then(|| self.value(values.start))
    }

    /// The largest value of document `doc`.
    pub fn max(&self, doc: u32) -> Option<i64> {
        let values = self.index.values_of(doc);
        (!values.is_empty()).then(|| self.value(values.end - 1))
    }

    /// The least and greatest value of block `block` (documents `256 block ..`), or `None`
    /// when none of its documents has a value.
    pub fn block_bounds(&self, block: u32) -> Option<(i64, i64)> {
        (block < self.index.block_count() && !self.index.block_values(block).is_empty())
            .then(|| bounds(self.index.block_bounds(block)))
    }

    /// Documents with at least one value.
    pub fn docs_with_value(&self) -> u32 {
        self.index.docs_with_value()
    }

    /// Values of all documents together.
    pub fn value_count(&self) -> u64 {
        self.index.value_count()
    }

    /// The smallest and the largest value of the column; `None` when it has none.
    pub fn range(&self) -> Option<(i64, i64)> {
        self.range
    }

    /// Sets bit `doc` of `out` (bit `doc % 64` of word `doc / 64`) for every document with a
    /// value in `[lo, hi]`, and returns how many documents that is. Blocks of 256 documents
    /// whose bounds are outside the range are skipped without reading their values, and those
    /// inside it are taken whole. `out` should have a bit for each of the segment's documents;
    /// documents past its end are left out.
    pub fn matching(&self, lo: i64, hi: i64, out: &mut [u64]) -> u64 {
        self.range_test(lo, hi).map_or(0, |test| test.matching(out))
    }

    /// The documents with a value in `[lo, hi]`, tested a document at a time; `None` when
    /// no value of the column can be in the range.
    pub fn range_test(&self, lo: i64, hi: i64) -> Option<RangeTest<'a>> {
        let packed = self.packed_range(lo, hi)?;
        Some(RangeTest::new(
            self.index,
            self.packed,
            self.width,
            packed,
            (lo, hi),
            Bounds::Numbers,
        ))
    }

    /// The packed values that stand for values in `[lo, hi]`, or `None` if none does.
    fn packed_range(&self, lo: i64, hi: i64) -> Option<(u64, u64)> {
        let min = i128::from(self.min);
        let gcd = u128::from(self.gcd);
        let (lo, hi) = (i128::from(lo), i128::from(hi));
        if lo > hi || hi < min {
            return None;
        }
        // Both differences are below 2^64: `lo` and `hi` are at least `min`, all are i64s.
        let low = ((lo.max(min) - min) as u128).div_ceil(gcd) as u64;
        let high = ((hi - min) as u128 / gcd) as u64;
        (low <= high).then_some((low, high))
    }
}

/// A block's bounds: its smallest and largest value.
fn bounds(bytes: &[u8]) -> (i64, i64) {
    let read = |at: usize| {
        bytes
            .get(at..at + 8)
            .and_then(|b| b.try_into().ok())
            .map_or(0, i64::from_le_bytes)
    };
    (read(0), read(8))
}
