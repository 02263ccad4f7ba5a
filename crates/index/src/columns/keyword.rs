//! [`KeywordColumn`]: a field's strings, as ordinals into the column's sorted dictionary.
//!
//! Each distinct value is stored once, in a dictionary sorted by bytes; documents hold
//! ordinals, bit-packed at the width of the largest. Sorting and range filters compare
//! ordinals, which order as the strings do; a prefix or range query turns its bounds into
//! ordinals once ([`KeywordColumn::ceiling_ordinal`]). The dictionary is plain (an offset
//! table and the bytes), so that [`KeywordColumn::value`] is a slice of the body, and a lookup
//! a binary search of at most 32 probes.
//!
//! ```text
//! keyword column: doc index (block bounds: min ordinal u32 | max ordinal u32) |
//!                 ordinal width u8 | dictionary length u32 | dictionary bytes u64 |
//!                 dictionary offset width u8 |
//!                 ordinal × value count, bit-packed at ordinal width |
//!                 offset × (dictionary length + 1), bit-packed at dictionary offset width |
//!                 dictionary bytes
//! ```
//!
//! Ordinal width is the width of `dictionary length − 1` (0 for one value or none), dictionary
//! offset width that of `dictionary bytes`. Value `o` is the bytes from offset `o` to offset
//! `o + 1`; the first offset is 0 and the last `dictionary bytes`. A block without values has
//! bounds `u32::MAX, 0`.

use super::bit_packing::{get, packed_len, width_of, BitWriter};
use super::doc_index::{self, DocIndex};
use super::range_test::{Bounds, RangeTest};
use super::reader::Cursor;
use super::ColumnsError;

/// Bytes of a block's bounds.
const BOUNDS_LEN: usize = 8;

/// Appends the keyword column of `ordinals` (of documents `docs`, see [`doc_index::encode`];
/// each document's ordinals ascending and distinct) into `dictionary` (sorted, distinct) to
/// `out`.
pub(super) fn encode(
    docs: &[u32],
    ordinals: &[u32],
    dictionary: &[&str],
    doc_count: u32,
    out: &mut Vec<u8>,
) {
    doc_index::encode(docs, doc_count, out, |range, out| {
        let block = &ordinals[range];
        let min = block.iter().copied().min().unwrap_or(u32::MAX);
        let max = block.iter().copied().max().unwrap_or(0);
        out.extend_from_slice(&min.to_le_bytes());
        out.extend_from_slice(&max.to_le_bytes());
    });
    let width = width_of(dictionary.len().saturating_sub(1) as u64);
    let bytes: u64 = dictionary.iter().map(|value| value.len() as u64).sum();
    let offsets_width = width_of(bytes);
    out.push(width);
    out.extend_from_slice(&(dictionary.len() as u32).to_le_bytes());
    out.extend_from_slice(&bytes.to_le_bytes());
    out.push(offsets_width);
    let mut writer = BitWriter::new(out, width);
    for &ordinal in ordinals {
        writer.push(u64::from(ordinal));
    }
    writer.finish();
    let mut writer = BitWriter::new(out, offsets_width);
    let mut offset = 0;
    writer.push(0);
    for value in dictionary {
        offset += value.len() as u64;
        writer.push(offset);
    }
    writer.finish();
    for value in dictionary {
        out.extend_from_slice(value.as_bytes());
    }
}

/// A field's strings, read in place.
#[derive(Debug, Clone, Copy)]
pub struct KeywordColumn<'a> {
    field: &'a str,
    index: DocIndex<'a>,
    ordinals: &'a [u8],
    width: u8,
    dictionary_len: u32,
    offsets: &'a [u8],
    offsets_width: u8,
    bytes: &'a [u8],
}

impl<'a> KeywordColumn<'a> {
    /// Reads the keyword column of `field`, of `doc_count` documents, checking its layout.
    pub(super) fn parse(
        cursor: &mut Cursor<'a>,
        field: &'a str,
        doc_count: u32,
    ) -> Result<KeywordColumn<'a>, ColumnsError> {
        let index = DocIndex::parse(cursor, doc_count, BOUNDS_LEN)?;
        let width = cursor.u8()?;
        let dictionary_len = cursor.u32()?;
        let bytes_len = cursor.u64()?;
        let offsets_width = cursor.u8()?;
        if width != width_of(u64::from(dictionary_len.saturating_sub(1)))
            || offsets_width != width_of(bytes_len)
            || (dictionary_len == 0 && index.value_count() > 0)
        {
            return Err(cursor.error(format!(
                "{} values into a dictionary of {dictionary_len} values, {bytes_len} bytes, \
                 at widths {width} and {offsets_width}",
                index.value_count()
            )));
        }
        let ordinals = cursor.take_opt(packed_len(index.value_count(), width), "ordinals")?;
        let offsets = cursor.take_opt(
            packed_len(u64::from(dictionary_len) + 1, offsets_width),
            "dictionary offsets",
        )?;
        let bytes = cursor.take(bytes_len, "dictionary")?;
        let column = KeywordColumn {
            field,
            index,
            ordinals,
            width,
            dictionary_len,
            offsets,
            offsets_width,
            bytes,
        };
        let last = column.offset(dictionary_len);
        if column.offset(0) != 0 || last != bytes_len {
            return Err(cursor.error(format!(
                "dictionary offsets from {} to {last}, of {bytes_len} bytes",
                column.offset(0)
            )));
        }
        for block in 0..index.block_count() {
            if index.block_values(block).is_empty() {
                continue;
            }
            let (low, high) = bounds(index.block_bounds(block));
            if low > high || high >= dictionary_len {
                return Err(cursor.error(format!(
                    "block {block} has ordinal bounds {low} and {high}, \
                     of {dictionary_len} values"
                )));
            }
        }
        Ok(column)
    }

    /// Offset `at` of the dictionary's offset table.
    fn offset(&self, at: u32) -> u64 {
        get(self.offsets, u64::from(at), self.offsets_width)
    }

    /// Ordinal number `at` of the column.
    #[inline]
    fn ordinal(&self, at: u64) -> u32 {
        get(self.ordinals, at, self.width) as u32
    }

    /// Replaces `out`'s contents with the ordinals of document `doc`, ascending and distinct
    /// (none for a document without values or past the segment's documents).
    pub fn ordinals(&self, doc: u32, out: &mut Vec<u32>) {
        out.clear();
        out.extend(self.index.values_of(doc).map(|at| self.ordinal(at)));
    }

    /// The smallest ordinal of document `doc`.
    pub fn min_ordinal(&self, doc: u32) -> Option<u32> {
        let values = self.index.values_of(doc);
        (!values.is_empty()).then(|| self.ordinal(values.start))
    }

    /// The largest ordinal of document `doc`.
    pub fn max_ordinal(&self, doc: u32) -> Option<u32> {
        let values = self.index.values_of(doc);
        (!values.is_empty()).then(|| self.ordinal(values.end - 1))
    }

    /// The least and greatest ordinal of block `block` (documents `256 block ..`), or `None`
    /// when none of its documents has a value.
    pub fn block_bounds(&self, block: u32) -> Option<(u32, u32)> {
        (block < self.index.block_count() && !self.index.block_values(block).is_empty())
            .then(|| bounds(self.index.block_bounds(block)))
    }

    /// Documents with at least one value.
    pub fn docs_with_value(&self) -> u32 {
        self.index.docs_with_value()
    }

    /// Values (ordinals) of all documents together.
    pub fn value_count(&self) -> u64 {
        self.index.value_count()
    }

    /// Distinct values: ordinals run from 0 to this, exclusive.
    pub fn dictionary_len(&self) -> u32 {
        self.dictionary_len
    }

    /// The value of ordinal `ordinal`; an error if there is none or its bytes are damaged.
    pub fn value(&self, ordinal: u32) -> Result<&'a str, ColumnsError> {
        if ordinal >= self.dictionary_len {
            return Err(ColumnsError::corrupt(
                Some(self.field),
                format!(
                    "ordinal {ordinal} of a dictionary of {}",
                    self.dictionary_len
                ),
            ));
        }
        let (start, end) = (self.offset(ordinal), self.offset(ordinal + 1));
        let bytes = usize::try_from(start)
            .ok()
            .zip(usize::try_from(end).ok())
            .and_then(|(start, end)| self.bytes.get(start..end))
            .ok_or_else(|| {
                ColumnsError::corrupt(
                    Some(self.field),
                    format!("value {ordinal} from byte {start} to {end} of the dictionary"),
                )
            })?;
        std::str::from_utf8(bytes).map_err(|_| {
            ColumnsError::corrupt(Some(self.field), format!("value {ordinal} is not UTF-8"))
        })
    }

    /// The bytes of ordinal `ordinal`, or none if its offsets are damaged (for searches).
    fn value_bytes(&self, ordinal: u32) -> &'a [u8] {
        let (start, end) = (self.offset(ordinal), self.offset(ordinal + 1));
        usize::try_from(start)
            .ok()
            .zip(usize::try_from(end).ok())
            .and_then(|(start, end)| self.bytes.get(start..end))
            .unwrap_or(&[])
    }

    /// The ordinal of `value`, if the column holds it.
    pub fn ordinal_of(&self, value: &str) -> Option<u32> {
        let ordinal = self.ceiling_ordinal(value);
        (ordinal < self.dictionary_len && self.value_bytes(ordinal) == value.as_bytes())
            .then_some(ordinal)
    }

    /// The first ordinal whose value is at or after `value` in byte order
    /// ([`KeywordColumn::dictionary_len`] if none is): the start of a prefix or range query.
    pub fn ceiling_ordinal(&self, value: &str) -> u32 {
        let (mut low, mut high) = (0u32, self.dictionary_len);
        while low < high {
            let middle = low + (high - low) / 2;
            if self.value_bytes(middle) < value.as_bytes() {
                low = middle + 1;
            } else {
                high = middle;
            }
        }
        low
    }

    /// Like [`NumericColumn::matching`](super::NumericColumn::matching), for the documents with
    /// an ordinal in `[lo, hi]`.
    pub fn matching(&self, lo: u32, hi: u32, out: &mut [u64]) -> u64 {
        self.range_test(lo, hi).map_or(0, |test| test.matching(out))
    }

    /// The documents with an ordinal in `[lo, hi]`, tested a document at a time; `None` when
    /// the range is empty.
    pub fn range_test(&self, lo: u32, hi: u32) -> Option<RangeTest<'a>> {
        (lo <= hi).then(|| {
            RangeTest::new(
                self.index,
                self.ordinals,
                self.width,
                (u64::from(lo), u64::from(hi)),
                (i64::from(lo), i64::from(hi)),
                Bounds::Ordinals,
            )
        })
    }
}

/// A block's bounds: its smallest and largest ordinal.
fn bounds(bytes: &[u8]) -> (u32, u32) {
    let read = |at: usize| {
        bytes
            .get(at..at + 4)
            .and_then(|b| b.try_into().ok())
            .map_or(0, u32::from_le_bytes)
    };
    (read(0), read(4))
}
