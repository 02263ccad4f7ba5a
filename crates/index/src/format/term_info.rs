//! Term metadata: one variable-length record per term, in groups of 16 terms
//! ([`super::term_groups`]).
//!
//! Most terms of a real vocabulary occur in a handful of documents, and a fixed-width record
//! with room for the longest list, plus a 32-byte skip entry for its one block, cost more
//! bytes than such a term's postings. So a record holds small numbers as VByte, leaves out
//! what its group implies (where the term's postings and skip entries start, a running sum
//! over the group), and keeps the skip entry of a term that has a single block inline,
//! written as differences that are mostly one byte, with document lengths as their norm
//! bytes. A term that occurs in one document (three terms in five of a real vocabulary) keeps
//! its posting in its record and has no postings bytes at all, as Lucene's block tree does
//! for such terms. Terms of more than one block keep their skip entries in the skip file,
//! where cursors read them in place.
//!
//! Checksums follow the same economy: the postings of a term with more than
//! [`SHORT_POSTINGS`] bytes have a CRC in its record; shorter ones share their group's
//! ([`super::term_groups`]), so the many short lists do not each pay four bytes.

use apcache_codec::BLOCK_LEN;

use super::vbyte::{read_vbyte, write_vbyte};
use super::SkipEntry;

/// Postings of at most this many bytes are covered by their group's checksum; longer ones by
/// a checksum of their own in the term's record.
pub const SHORT_POSTINGS: u64 = 256;

/// What the index knows about one term of a segment.
///
/// A record (VByte fields unless marked):
///
/// ```text
/// doc_freq << 1 | (total_term_freq > doc_freq)
/// [total_term_freq - doc_freq - 1]                       when the low bit is set
/// doc_freq = 1:        first_doc | norm u8
/// doc_freq 2 to 256:   docs_bytes | freqs_bytes |
///                      first_doc | last_doc - first_doc | max_freq - 1 | best_freq - 1 |
///                      min_norm u8 | best_norm u8 | [postings crc u32]
/// doc_freq > 256:      docs_bytes | freqs_bytes | [postings crc u32]
/// ```
///
/// The postings crc is there when `docs_bytes + freqs_bytes` > [`SHORT_POSTINGS`]. A lone
/// posting (doc_freq = 1) has no postings bytes: its document is `first_doc` and its frequency
/// the total term frequency, so its entry's `max_freq` and `best_freq` are that, `last_doc` is
/// `first_doc`, and `min_norm` and `best_norm` are its norm byte (see [`SkipEntry`] on norm
/// bytes). A single block's DIDs start at the term's postings and its frequencies at
/// `docs_bytes`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct TermInfo {
    /// Documents containing the term (postings in its list).
    pub doc_freq: u32,
    /// Sum of the term's frequencies over the segment.
    pub total_term_freq: u64,
    /// Offset of the term's postings in the postings file body: its DID blocks, then its
    /// frequency blocks, contiguous.
    pub postings_offset: u64,
    /// Bytes of its DID blocks (0 for a lone posting).
    pub docs_bytes: u32,
    /// Bytes of its frequency blocks (0 for a lone posting).
    pub freqs_bytes: u32,
    /// Index of its first entry in the skip file, for a term of more than one block (for
    /// others, where the next such term's entries start).
    pub first_skip: u32,
    /// The skip entry of a term of one block, kept in its record.
    pub single_block: Option<SkipEntry>,
    /// The CRC32C of its postings when they are longer than [`SHORT_POSTINGS`] (else 0: the
    /// group's checksum covers them).
    pub postings_crc: u32,
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

    /// Whether its postings carry a checksum of their own (in the record), rather than
    /// sharing their group's.
    pub fn has_own_checksum(&self) -> bool {
        self.postings_bytes() > SHORT_POSTINGS
    }

    /// The document and frequency of a term that occurs in one document, kept in its record.
    #[inline]
    pub fn lone_posting(&self) -> Option<(u32, u32)> {
        match (self.doc_freq, &self.single_block) {
            (1, Some(entry)) => Some((entry.first_doc, entry.max_freq)),
            _ => None,
        }
    }

    /// Appends the term's record; `block` is its skip entry when it has one block (and
    /// ignored otherwise).
    pub fn write_record(&self, block: &SkipEntry, out: &mut Vec<u8>) {
        let extra = self.total_term_freq - u64::from(self.doc_freq);
        write_vbyte(u64::from(self.doc_freq) << 1 | u64::from(extra > 0), out);
        if extra > 0 {
            write_vbyte(extra - 1, out);
        }
        if self.doc_freq == 1 {
            write_vbyte(u64::from(block.first_doc), out);
            out.push(block.min_norm);
            return;
        }
        write_vbyte(u64::from(self.docs_bytes), out);
        write_vbyte(u64::from(self.freqs_bytes), out);
        if self.blocks() == 1 {
            for v in [
                block.first_doc,
                block.last_doc - block.first_doc,
                block.max_freq - 1,
                block.best_freq - 1,
            ] {
                write_vbyte(u64::from(v), out);
            }
            out.push(block.min_norm);
            out.push(block.best_norm);
        }
        if self.has_own_checksum() {
            out.extend_from_slice(&self.postings_crc.to_le_bytes());
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
        let head = next()?;
        let doc_freq = narrow(head >> 1)?;
        if doc_freq == 0 {
            return Err(RecordError::Inconsistent);
        }
        let extra = match head & 1 {
            0 => 0,
            _ => next()?.checked_add(1).ok_or(RecordError::Inconsistent)?,
        };
        let total_term_freq = extra
            .checked_add(u64::from(doc_freq))
            .ok_or(RecordError::Inconsistent)?;
        let mut info = TermInfo {
            doc_freq,
            total_term_freq,
            postings_offset,
            first_skip,
            ..TermInfo::default()
        };
        if doc_freq == 1 {
            let first_doc = narrow(next()?)?;
            let freq = narrow(total_term_freq)?;
            let norm = read_byte(bytes, pos)?;
            info.single_block = Some(SkipEntry {
                first_doc,
                last_doc: first_doc,
                docs_offset: 0,
                freqs_offset: 0,
                max_freq: freq,
                min_norm: norm,
                best_freq: freq,
                best_norm: norm,
            });
            return Ok(info);
        }
        info.docs_bytes = narrow(next()?)?;
        info.freqs_bytes = narrow(next()?)?;
        if info.blocks() == 1 {
            let mut field = || -> Result<u32, RecordError> { narrow(next()?) };
            let first_doc = field()?;
            let span = field()?;
            let max_freq = field()?;
            let best_freq = field()?;
            let min_norm = read_byte(bytes, pos)?;
            let best_norm = read_byte(bytes, pos)?;
            let add = |a: u32, b: u32| a.checked_add(b).ok_or(RecordError::Inconsistent);
            info.single_block = Some(SkipEntry {
                first_doc,
                last_doc: add(first_doc, span)?,
                docs_offset: 0,
                freqs_offset: info.docs_bytes,
                max_freq: add(max_freq, 1)?,
                min_norm,
                best_freq: add(best_freq, 1)?,
                best_norm,
            });
        }
        if info.has_own_checksum() {
            let crc = bytes.get(*pos..*pos + 4).ok_or(RecordError::Truncated)?;
            info.postings_crc = u32::from_le_bytes(crc.try_into().expect("4 bytes"));
            *pos += 4;
        }
        Ok(info)
    }
}

fn read_byte(bytes: &[u8], pos: &mut usize) -> Result<u8, RecordError> {
    let byte = *bytes.get(*pos).ok_or(RecordError::Truncated)?;
    *pos += 1;
    Ok(byte)
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    proptest! {
        #[test]
        fn records_round_trip(
            doc_freq in prop_oneof![Just(1u32), 2u32..=256, 257u32..1_000_000],
            extra in prop_oneof![Just(0u64), 0u64..1 << 40],
            postings_bytes in prop_oneof![1u32..=300, 300u32..1 << 30],
            crc in any::<u32>(),
            first_doc in 0u32..1 << 31,
            span in 0u32..1 << 20,
            max_freq in 1u32..1 << 20,
            min_norm in any::<u8>(),
            best in 0u32..1 << 20,
            best_norm in any::<u8>(),
        ) {
            let (docs_bytes, freqs_bytes) = match doc_freq {
                1 => (0, 0),
                _ => (postings_bytes - postings_bytes / 3, postings_bytes / 3),
            };
            let mut expected = TermInfo {
                doc_freq,
                total_term_freq: u64::from(doc_freq) + extra,
                postings_offset: 1234,
                docs_bytes,
                freqs_bytes,
                first_skip: 42,
                single_block: None,
                postings_crc: 0,
            };
            if expected.has_own_checksum() {
                expected.postings_crc = crc;
            }
            let block = if doc_freq == 1 {
                let freq = u32::try_from(expected.total_term_freq).unwrap_or(u32::MAX);
                expected.total_term_freq = u64::from(freq);
                SkipEntry {
                    first_doc,
                    last_doc: first_doc,
                    docs_offset: 0,
                    freqs_offset: 0,
                    max_freq: freq,
                    min_norm,
                    best_freq: freq,
                    best_norm: min_norm,
                }
            } else {
                SkipEntry {
                    first_doc,
                    last_doc: first_doc + span,
                    docs_offset: 0,
                    freqs_offset: expected.docs_bytes,
                    max_freq,
                    min_norm,
                    best_freq: best % max_freq + 1,
                    best_norm,
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
            if doc_freq == 1 {
                prop_assert_eq!(expected.lone_posting(), Some((first_doc, block.max_freq)));
            } else {
                prop_assert_eq!(expected.lone_posting(), None);
            }
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
