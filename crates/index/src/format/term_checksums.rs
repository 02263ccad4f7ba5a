//! Per-term checksums: what lets a reader trust one term without reading the whole index.
//!
//! A file checksum covers every byte, but verifying it means reading the whole file, which an
//! index larger than memory cannot do before each query. So every term carries two CRC32Cs of
//! its own, one per ordinal in the checksums file:
//!
//! ```text
//! meta: u32 | postings: u32      (8 bytes, little-endian)
//! ```
//!
//! `meta` covers the term's 32-byte term-info record followed by its skip entries, which is all
//! a query reads about a term before its postings (its document frequency for the weight, its
//! block bounds); `postings` covers the term's postings bytes (its DID blocks, then its
//! frequency blocks). A reader verifies `meta` when a query first looks the term up and
//! `postings` when they are first decoded or copied into a cache; a mismatch fails the queries
//! that touch that term and no others.

use crate::IndexError;

/// The two checksums of one term.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct TermChecksums {
    /// CRC32C of the term-info record and the term's skip entries.
    pub meta: u32,
    /// CRC32C of the term's postings bytes.
    pub postings: u32,
}

impl TermChecksums {
    /// Bytes of one record.
    pub const LEN: usize = 8;

    /// The checksums of a term whose term-info record is `info_record`, whose skip entries are
    /// `skips` and whose postings are `postings`.
    pub fn of(info_record: &[u8], skips: &[u8], postings: &[u8]) -> TermChecksums {
        TermChecksums {
            meta: meta_checksum(info_record, skips),
            postings: crc32c::crc32c(postings),
        }
    }

    /// Appends the record.
    pub fn write_to(&self, out: &mut Vec<u8>) {
        out.extend_from_slice(&self.meta.to_le_bytes());
        out.extend_from_slice(&self.postings.to_le_bytes());
    }

    /// Reads record `ordinal` of a checksums body.
    pub fn read(body: &[u8], ordinal: u64, file: &str) -> Result<TermChecksums, IndexError> {
        let at = super::record(body, ordinal, Self::LEN, file)?;
        Ok(TermChecksums {
            meta: u32::from_le_bytes(at[..4].try_into().expect("4 bytes")),
            postings: u32::from_le_bytes(at[4..].try_into().expect("4 bytes")),
        })
    }
}

/// CRC32C of a term-info record followed by the term's skip entries.
pub fn meta_checksum(info_record: &[u8], skips: &[u8]) -> u32 {
    crc32c::crc32c_append(crc32c::crc32c(info_record), skips)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trips_and_reads_by_ordinal() {
        let sums = [
            TermChecksums::of(&[1; 32], &[2; 64], &[3; 10]),
            TermChecksums::of(&[4; 32], &[], &[]),
        ];
        let mut body = Vec::new();
        for s in &sums {
            s.write_to(&mut body);
        }
        assert_eq!(body.len(), 2 * TermChecksums::LEN);
        assert_eq!(TermChecksums::read(&body, 1, "f").unwrap(), sums[1]);
        assert_eq!(TermChecksums::read(&body, 0, "f").unwrap(), sums[0]);
        assert!(TermChecksums::read(&body, 2, "f").is_err());
        assert!(TermChecksums::read(&body, u64::MAX, "f").is_err());
    }

    #[test]
    fn every_part_changes_the_checksums() {
        let base = TermChecksums::of(&[1; 32], &[2; 32], &[3; 8]);
        assert_ne!(
            TermChecksums::of(&[0; 32], &[2; 32], &[3; 8]).meta,
            base.meta
        );
        assert_ne!(
            TermChecksums::of(&[1; 32], &[0; 32], &[3; 8]).meta,
            base.meta
        );
        assert_ne!(
            TermChecksums::of(&[1; 32], &[2; 32], &[0; 8]).postings,
            base.postings
        );
    }
}
