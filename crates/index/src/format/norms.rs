//! The norms file: each document's norm byte, and the rest of its exact length.
//!
//! Scoring as Lucene does needs only the norm byte (Lucene's one-byte quantisation of the
//! length), one per document; scoring with exact lengths ([`crate::search::Norms::Exact`]) and
//! the segment's statistics need the length itself. A norm byte stands for a range of lengths
//! starting at [`norm_to_length`] of it, so a document's length is that plus a *residual*
//! smaller than the range: 0 below 24 tokens, a few bits for typical lengths (the range of a
//! length near 1,000 is 64 wide). Residuals are bit-packed in groups of 256 documents, each
//! group at the width of its largest, which costs about a quarter of a four-byte length.
//!
//! ```text
//! body:  norm byte u8 × documents | group × ceil(documents / 256) | residuals
//! group: residuals offset u64 | width u8                                   (9 bytes)
//! ```
//!
//! A group's residuals start at its offset (from the start of the residuals) and take
//! `ceil(n × width / 8)` bytes for its `n` documents, document `i` of the group at bits
//! `[i × width, i × width + width)` (bit `k` is bit `k % 8` of byte `k / 8`); the next group
//! starts where it ends, and the last ends the body. Width is 0 to 32.

use crate::search::{length_to_norm, norm_to_length};

/// Documents per group of residuals.
pub const NORMS_GROUP: usize = 256;

/// Bytes of a group's entry.
const GROUP_ENTRY_LEN: usize = 9;

/// The norms body of documents of these lengths (in local order).
pub fn encode_norms(lengths: &[u32]) -> Vec<u8> {
    let mut body: Vec<u8> = lengths.iter().map(|&len| length_to_norm(len)).collect();
    let groups = lengths.len().div_ceil(NORMS_GROUP);
    let mut table = Vec::with_capacity(groups * GROUP_ENTRY_LEN);
    let mut residuals = Vec::new();
    for group in lengths.chunks(NORMS_GROUP) {
        let values: Vec<u32> = group.iter().map(|&len| residual(len)).collect();
        let width = 32 - values.iter().fold(0, |a, &v| a | v).leading_zeros();
        table.extend_from_slice(&(residuals.len() as u64).to_le_bytes());
        table.push(width as u8);
        let mut packed = vec![0u8; (values.len() * width as usize).div_ceil(8)];
        for (i, &value) in values.iter().enumerate() {
            let bit = i * width as usize;
            let mut bits = u64::from(value) << (bit % 8);
            for byte in &mut packed[bit / 8..] {
                if bits == 0 {
                    break;
                }
                *byte |= bits as u8;
                bits >>= 8;
            }
        }
        residuals.extend_from_slice(&packed);
    }
    body.extend_from_slice(&table);
    body.extend_from_slice(&residuals);
    body
}

/// What a length adds to the shortest length of its norm byte.
fn residual(length: u32) -> u32 {
    length - norm_to_length(length_to_norm(length))
}

/// A norms body, its layout checked.
#[derive(Debug, Clone, Copy)]
pub struct NormsFile<'a> {
    norm_bytes: &'a [u8],
    table: &'a [u8],
    residuals: &'a [u8],
}

impl<'a> NormsFile<'a> {
    /// The norms body of `documents` documents; an error says what in its layout is wrong.
    pub fn new(body: &'a [u8], documents: u32) -> Result<NormsFile<'a>, String> {
        let norms = NormsFile::split(body, documents);
        let documents = documents as usize;
        let groups = documents.div_ceil(NORMS_GROUP);
        let table_end = documents + groups * GROUP_ENTRY_LEN;
        if body.len() < table_end {
            return Err(format!(
                "{} bytes of norms, {documents} documents need at least {table_end}",
                body.len()
            ));
        }
        let mut expected = 0u64;
        for group in 0..groups {
            let (offset, width) = norms.group(group);
            if offset != expected || width > 32 {
                return Err(format!(
                    "residual group {group} at {offset} with width {width}, expected at {expected} with width 32 at most"
                ));
            }
            let docs = NORMS_GROUP.min(documents - group * NORMS_GROUP) as u64;
            expected += (docs * u64::from(width)).div_ceil(8);
        }
        if expected != norms.residuals.len() as u64 {
            return Err(format!(
                "{} bytes of residuals, the groups take {expected}",
                norms.residuals.len()
            ));
        }
        Ok(norms)
    }

    /// The norms body of `documents` documents, cut into its parts without checking the
    /// groups (for a body [`NormsFile::new`] accepted before). A body too short for its
    /// parts reads as having no documents past its end.
    pub fn split(body: &'a [u8], documents: u32) -> NormsFile<'a> {
        let documents = (documents as usize).min(body.len());
        let table_end = documents
            .saturating_add(documents.div_ceil(NORMS_GROUP) * GROUP_ENTRY_LEN)
            .min(body.len());
        NormsFile {
            norm_bytes: &body[..documents],
            table: &body[documents..table_end],
            residuals: &body[table_end..],
        }
    }

    /// The offset and width of group `group`.
    fn group(&self, group: usize) -> (u64, u32) {
        match self
            .table
            .get(group * GROUP_ENTRY_LEN..(group + 1) * GROUP_ENTRY_LEN)
        {
            Some(at) => (
                u64::from_le_bytes(at[..8].try_into().expect("8 bytes")),
                u32::from(at[8]),
            ),
            None => (0, 0),
        }
    }

    /// The norm bytes, one per document in local order.
    #[inline]
    pub fn norm_bytes(&self) -> &'a [u8] {
        self.norm_bytes
    }

    /// Every document's length, in local order: one pass over the groups, for the readers
    /// that want them all (a segment's statistics at open, `check`, merges).
    pub fn lengths(&self) -> Vec<u32> {
        let mut lengths = Vec::with_capacity(self.norm_bytes.len());
        for (group, norms) in self.norm_bytes.chunks(NORMS_GROUP).enumerate() {
            let (offset, width) = self.group(group);
            let width = width.min(32) as usize;
            let start = (offset as usize).min(self.residuals.len());
            let bytes = &self.residuals[start..];
            for (i, &norm) in norms.iter().enumerate() {
                lengths.push(norm_to_length(norm).wrapping_add(read_bits(bytes, i * width, width)));
            }
        }
        lengths
    }

    /// The length of the document at local index `local`, if there is one.
    #[inline]
    pub fn length(&self, local: u32) -> Option<u32> {
        let local = local as usize;
        let norm = *self.norm_bytes.get(local)?;
        let (offset, width) = self.group(local / NORMS_GROUP);
        let width = width.min(32);
        let bytes = self.residuals.get(offset as usize..).unwrap_or(&[]);
        let residual = read_bits(
            bytes,
            (local % NORMS_GROUP) * width as usize,
            width as usize,
        );
        Some(norm_to_length(norm).wrapping_add(residual))
    }
}

/// The `width` (at most 32) bits of `bytes` from bit `bit` on; bits past the end read as 0.
#[inline]
fn read_bits(bytes: &[u8], bit: usize, width: usize) -> u32 {
    let mut window = [0u8; 8];
    let available = bytes.get(bit / 8..).unwrap_or(&[]);
    let take = available.len().min(8);
    window[..take].copy_from_slice(&available[..take]);
    let bits = u64::from_le_bytes(window) >> (bit % 8);
    (bits & ((1u64 << width) - 1)) as u32
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    proptest! {
        #[test]
        fn lengths_round_trip(
            lengths in prop::collection::vec(
                prop_oneof![0u32..30, 0u32..5_000, 0u32..=i32::MAX as u32],
                0..700,
            ),
        ) {
            let body = encode_norms(&lengths);
            let norms = NormsFile::new(&body, lengths.len() as u32).unwrap();
            prop_assert_eq!(&norms.lengths(), &lengths);
            for (local, &length) in lengths.iter().enumerate() {
                prop_assert_eq!(norms.length(local as u32), Some(length));
                prop_assert_eq!(norms.norm_bytes()[local], length_to_norm(length));
            }
            prop_assert_eq!(norms.length(lengths.len() as u32), None);
        }

        #[test]
        fn a_wrong_layout_is_refused(
            lengths in prop::collection::vec(0u32..100_000, 1..600),
            cut in 1usize..20,
        ) {
            let body = encode_norms(&lengths);
            let documents = lengths.len() as u32;
            prop_assert!(NormsFile::new(&body[..body.len().saturating_sub(cut)], documents).is_err());
            let mut longer = body.clone();
            longer.push(0);
            prop_assert!(NormsFile::new(&longer, documents).is_err());
            let mut wide = body.clone();
            wide[lengths.len() + 8] = 33;
            prop_assert!(NormsFile::new(&wide, documents).is_err());
        }
    }

    #[test]
    fn short_documents_take_no_residual_bits() {
        let body = encode_norms(&[3; 300]);
        assert_eq!(body.len(), 300 + 2 * GROUP_ENTRY_LEN);
    }
}
