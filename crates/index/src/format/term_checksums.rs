//! Per-term postings checksums: what lets a reader trust one term's postings without reading
//! the whole postings file.
//!
//! A file checksum covers every byte, but verifying it means reading the whole file, which an
//! index larger than memory cannot do before each query. So every term's postings bytes (its
//! DID blocks, then its frequency blocks) carry a CRC32C of their own, one per ordinal in the
//! checksums file:
//!
//! ```text
//! postings: u32      (4 bytes, little-endian)
//! ```
//!
//! A reader verifies it when the postings are first decoded or copied into a cache; a
//! mismatch fails the queries that touch that term and no others. What a query reads about a
//! term before its postings (its record and skip entries) is covered by its group's checksum
//! in the term-info file ([`super::term_groups`]).

/// The postings checksum of one term.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct TermChecksums {
    /// CRC32C of the term's postings bytes.
    pub postings: u32,
}

impl TermChecksums {
    /// Bytes of one record.
    pub const LEN: usize = 4;

    /// The checksum of a term whose postings are `postings`.
    pub fn of(postings: &[u8]) -> TermChecksums {
        TermChecksums {
            postings: crc32c::crc32c(postings),
        }
    }

    /// Appends the record.
    pub fn write_to(&self, out: &mut Vec<u8>) {
        out.extend_from_slice(&self.postings.to_le_bytes());
    }

    /// Reads record `ordinal` of a checksums body.
    pub fn read(body: &[u8], ordinal: u64) -> Option<TermChecksums> {
        let start = usize::try_from(ordinal).ok()?.checked_mul(Self::LEN)?;
        let at = body.get(start..start.checked_add(Self::LEN)?)?;
        Some(TermChecksums {
            postings: u32::from_le_bytes(at.try_into().expect("4 bytes")),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trips_and_reads_by_ordinal() {
        let sums = [TermChecksums::of(&[3; 10]), TermChecksums::of(&[])];
        let mut body = Vec::new();
        for s in &sums {
            s.write_to(&mut body);
        }
        assert_eq!(body.len(), 2 * TermChecksums::LEN);
        assert_eq!(TermChecksums::read(&body, 1).unwrap(), sums[1]);
        assert_eq!(TermChecksums::read(&body, 0).unwrap(), sums[0]);
        assert!(TermChecksums::read(&body, 2).is_none());
        assert!(TermChecksums::read(&body, u64::MAX).is_none());
        assert_ne!(TermChecksums::of(&[0; 8]), TermChecksums::of(&[1; 8]));
    }
}
