//! Term metadata: one fixed-width record per term ordinal, so a term's record is found by
//! multiplication after the dictionary gave its ordinal.

use crate::IndexError;

/// What the index knows about one term of a segment.
///
/// ```text
/// doc_freq: u32 | docs_bytes: u32 | total_term_freq: u64 | postings_offset: u64 |
/// first_skip: u32 | freqs_bytes: u32      (32 bytes, little-endian)
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct TermInfo {
    /// Documents containing the term (postings in its list).
    pub doc_freq: u32,
    /// Sum of the term's frequencies over the segment.
    pub total_term_freq: u64,
    /// Offset of the term's postings in the postings file body: its DID blocks, then its
    /// frequency blocks, contiguous.
    pub postings_offset: u64,
    /// Bytes of the term's DID blocks.
    pub docs_bytes: u32,
    /// Bytes of the term's frequency blocks (they follow the DID blocks).
    pub freqs_bytes: u32,
    /// Index of the term's first skip entry; it has `ceil(doc_freq / 256)` entries.
    pub first_skip: u32,
}

impl TermInfo {
    /// Bytes of one record.
    pub const LEN: usize = 32;

    /// Number of blocks (and skip entries) of the term.
    pub fn blocks(&self) -> usize {
        (self.doc_freq as usize).div_ceil(apcache_codec::BLOCK_LEN)
    }

    /// Total bytes of the term's postings (one sequential read).
    pub fn postings_bytes(&self) -> u64 {
        u64::from(self.docs_bytes) + u64::from(self.freqs_bytes)
    }

    /// Appends the record.
    pub fn write_to(&self, out: &mut Vec<u8>) {
        out.extend_from_slice(&self.doc_freq.to_le_bytes());
        out.extend_from_slice(&self.docs_bytes.to_le_bytes());
        out.extend_from_slice(&self.total_term_freq.to_le_bytes());
        out.extend_from_slice(&self.postings_offset.to_le_bytes());
        out.extend_from_slice(&self.first_skip.to_le_bytes());
        out.extend_from_slice(&self.freqs_bytes.to_le_bytes());
    }

    /// Reads record `ordinal` of a term-infos body.
    pub fn read(body: &[u8], ordinal: u64, file: &str) -> Result<TermInfo, IndexError> {
        let at = super::record(body, ordinal, Self::LEN, file)?;
        let u32_at = |i: usize| u32::from_le_bytes(at[i..i + 4].try_into().expect("4 bytes"));
        let u64_at = |i: usize| u64::from_le_bytes(at[i..i + 8].try_into().expect("8 bytes"));
        Ok(TermInfo {
            doc_freq: u32_at(0),
            docs_bytes: u32_at(4),
            total_term_freq: u64_at(8),
            postings_offset: u64_at(16),
            first_skip: u32_at(24),
            freqs_bytes: u32_at(28),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trips() {
        let info = TermInfo {
            doc_freq: 1000,
            total_term_freq: 1 << 40,
            postings_offset: 123_456_789_012,
            docs_bytes: 77,
            freqs_bytes: 9,
            first_skip: 42,
        };
        let mut body = vec![0u8; TermInfo::LEN];
        info.write_to(&mut body);
        assert_eq!(body.len(), 2 * TermInfo::LEN);
        assert_eq!(TermInfo::read(&body, 1, "t").unwrap(), info);
        assert!(TermInfo::read(&body, 2, "t").is_err());
    }
}
