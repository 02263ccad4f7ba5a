//! Term metadata: one variable-length record per term, in groups of 16 terms
//! ([`super::term_groups`]).
//!
//! Most terms of a real vocabulary occur in a handful of documents, and a fixed-width record
//! with room for the longest list, plus a 32-byte skip entry for its one block, cost more
//! bytes than such a term's postings. So a record holds small numbers as VByte, leaves out
//! what its group implies (where the term's postings and skip entries start, a running sum
//! over the group), and keeps the skip entry of a term that has a single block inline,
//! written as differences that are mostly one byte. Terms of more than one block keep their
//! skip entries in the skip file, where cursors read them in place.

use apcache_codec::BLOCK_LEN;

use super::vbyte::{read_vbyte, write_vbyte};
use super::SkipEntry;

/// What the index knows about one term of a segment.
///
/// A record (every field VByte):
///
/// ```text
/// doc_freq | total_term_freq - doc_freq | docs_bytes | freqs_bytes
/// then, for a term of one block (doc_freq <= 256), its skip entry:
///   doc_freq = 1: first_doc | min_doc_len
///   doc_freq > 1: first_doc | last_doc - first_doc | max_freq - 1 | min_doc_len |
///                 best_freq - 1 | best_doc_len - min_doc_len
/// ```
///
/// A lone posting's frequency is the total term frequency, so its entry's `max_freq` and
/// `best_freq` are that, `last_doc` is `first_doc` and `best_doc_len` is `min_doc_len`. A
/// single block's DIDs start at the term's postings and its frequencies at `docs_bytes`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct TermInfo {
    /// Documents containing the term (postings in its list).
    pub doc_freq: u32,
    /// Sum of the term's frequencies over the segment.
    pub total_term_freq: u64,
    /// Offset of the term's postings in the postings file body: its DID blocks, then its
    /// frequency blocks, contiguous.
    pub postings_offset: u64,
    /// Bytes of its DID blocks.
    pub docs_bytes: u32,
    /// Bytes of its frequency blocks.
    pub freqs_bytes: u32,
    /// Index of its first entry in the skip file, for a term of more than one block (for
    /// others, where the next such term's entries start).
    pub first_skip: u32,
    /// The skip entry of a term of one block, kept in its record.
    pub single_block: Option<SkipEntry>,
}

/// Why a record cannot be read.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RecordError {
    /// The bytes end inside the record, or a field overflows.
    Truncated,
    /// The fields contradict each other (a zero document frequency, a frequency that
    /// cannot be).
    Inconsistent,
}

impl TermInfo {
    /// Number of posting blocks (and of skip entries).
    pub fn blocks(&self) -> usize {
        (self.doc_freq as usize).div_ceil(BLOCK_LEN)
    }

    /// Number of entries the term has in the skip file: its blocks, or none for a term of
    /// one block.
    pub fn stored_skip_entries(&self) -> usize {
        match self.blocks() {
            1 => 0,
            blocks => blocks,
        }
    }

    /// Bytes of its postings.
    pub fn postings_bytes(&self) -> u64 {
        u64::from(self.docs_bytes) + u64::from(self.freqs_bytes)
    }

    /// Appends the term's record; `block` is its skip entry when it has one block (and
    /// ignored otherwise).
    pub fn write_record(&self, block: &SkipEntry, out: &mut Vec<u8>) {
        write_vbyte(u64::from(self.doc_freq), out);
        write_vbyte(self.total_term_freq - u64::from(self.doc_freq), out);
        write_vbyte(u64::from(self.docs_bytes), out);
        write_vbyte(u64::from(self.freqs_bytes), out);
        if self.blocks() != 1 {
            return;
        }
        write_vbyte(u64::from(block.first_doc), out);
        if self.doc_freq == 1 {
            write_vbyte(u64::from(block.min_doc_len), out);
            return;
        }
        for v in [
            block.last_doc - block.first_doc,
            block.max_freq - 1,
            block.min_doc_len,
            block.best_freq - 1,
            block.best_doc_len - block.min_doc_len,
        ] {
            write_vbyte(u64::from(v), out);
        }
    }

    /// Reads the record at `*pos` of `bytes`, for a term whose postings start at
    /// `postings_offset` and whose skip entries (if it keeps any) at `first_skip`.
    pub fn read_record(
        bytes: &[u8],
        pos: &mut usize,
        postings_offset: u64,
        first_skip: u32,
    ) -> Result<TermInfo, RecordError> {
        let mut next = || read_vbyte(bytes, pos).ok_or(RecordError::Truncated);
        let narrow = |v: u64| u32::try_from(v).map_err(|_| RecordError::Inconsistent);
        let doc_freq = narrow(next()?)?;
        let total_term_freq = next()?
            .checked_add(u64::from(doc_freq))
            .ok_or(RecordError::Inconsistent)?;
        let docs_bytes = narrow(next()?)?;
        let freqs_bytes = narrow(next()?)?;
        if doc_freq == 0 {
            return Err(RecordError::Inconsistent);
        }
        let mut info = TermInfo {
            doc_freq,
            total_term_freq,
            postings_offset,
            docs_bytes,
            freqs_bytes,
            first_skip,
            single_block: None,
        };
        if info.blocks() != 1 {
            return Ok(info);
        }
        let first_doc = narrow(next()?)?;
        let block = if doc_freq == 1 {
            let freq = narrow(total_term_freq)?;
            let length = narrow(next()?)?;
            SkipEntry {
                first_doc,
                last_doc: first_doc,
                docs_offset: 0,
                freqs_offset: docs_bytes,
                max_freq: freq,
                min_doc_len: length,
                best_freq: freq,
                best_doc_len: length,
            }
        } else {
            let mut field = || -> Result<u32, RecordError> { narrow(next()?) };
            let span = field()?;
            let max_freq = field()?;
            let min_doc_len = field()?;
            let best_freq = field()?;
            let best_extra = field()?;
            let add = |a: u32, b: u32| a.checked_add(b).ok_or(RecordError::Inconsistent);
            SkipEntry {
                first_doc,
                last_doc: add(first_doc, span)?,
                docs_offset: 0,
                freqs_offset: docs_bytes,
                max_freq: add(max_freq, 1)?,
                min_doc_len,
                best_freq: add(best_freq, 1)?,
                best_doc_len: add(min_doc_len, best_extra)?,
            }
        };
        info.single_block = Some(block);
        Ok(info)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn info(doc_freq: u32, extra: u64) -> TermInfo {
        TermInfo {
            doc_freq,
            total_term_freq: u64::from(doc_freq) + extra,
            postings_offset: 1234,
            docs_bytes: 77,
            freqs_bytes: 9,
            first_skip: 42,
            single_block: None,
        }
    }

    proptest! {
        #[test]
        fn records_round_trip(
            doc_freq in prop_oneof![Just(1u32), 2u32..=256, 257u32..1_000_000],
            extra in 0u64..1 << 40,
            first_doc in 0u32..1 << 31,
            span in 0u32..1 << 20,
            max_freq in 1u32..1 << 20,
            min_doc_len in 0u32..1 << 20,
            best in 0u32..1 << 20,
            best_extra in 0u32..1 << 20,
        ) {
            let mut expected = info(doc_freq, extra);
            let block = if doc_freq == 1 {
                let freq = u32::try_from(expected.total_term_freq).unwrap_or(u32::MAX);
                expected.total_term_freq = u64::from(freq);
                SkipEntry {
                    first_doc,
                    last_doc: first_doc,
                    docs_offset: 0,
                    freqs_offset: expected.docs_bytes,
                    max_freq: freq,
                    min_doc_len,
                    best_freq: freq,
                    best_doc_len: min_doc_len,
                }
            } else {
                SkipEntry {
                    first_doc,
                    last_doc: first_doc + span,
                    docs_offset: 0,
                    freqs_offset: expected.docs_bytes,
                    max_freq,
                    min_doc_len,
                    best_freq: best % max_freq + 1,
                    best_doc_len: min_doc_len + best_extra,
                }
            };
            if expected.blocks() == 1 {
                expected.single_block = Some(block);
            }
            let mut bytes = vec![0xAA];
            expected.write_record(&block, &mut bytes);
            let mut pos = 1;
            let read = TermInfo::read_record(&bytes, &mut pos, 1234, 42);
            prop_assert_eq!(read, Ok(expected));
            prop_assert_eq!(pos, bytes.len());
            // Every truncation is an error, never a different record.
            for cut in 1..bytes.len() {
                let mut pos = 1;
                prop_assert!(TermInfo::read_record(&bytes[..cut], &mut pos, 1234, 42).is_err());
            }
        }
    }

    #[test]
    fn a_zero_document_frequency_is_refused() {
        let mut pos = 0;
        assert_eq!(
            TermInfo::read_record(&[0, 0, 0, 0, 0, 0], &mut pos, 0, 0),
            Err(RecordError::Inconsistent)
        );
    }
}
