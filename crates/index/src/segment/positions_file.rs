//! The positions file of a segment (`.pos`, kind `POSI`): every term's positions region (see
//! [`crate::format::positions`]) in term-ordinal order, then a table that locates and checks
//! each region.
//!
//! ```text
//! body: region* | region end u64 × terms | region crc u32 × terms | terms u64 | table crc u32
//! ```
//!
//! Region `t` spans from the end of region `t - 1` (0 for the first) to its own end. The table
//! CRC (CRC32C of the ends, the CRCs and `terms`) is verified the first time a process reads
//! positions from the segment; a region's CRC the first time a query reads that term's
//! positions. Only phrase queries open the file, so an index whose users never type a phrase
//! never reads a page of it.

use std::sync::OnceLock;

use crate::format::TermPositions;
use crate::IndexError;

/// Bytes of the trailer after the table: `terms u64 | table crc u32`.
const TRAILER: usize = 12;
/// Bytes of the table per term: a `u64` end and a `u32` CRC.
const PER_TERM: usize = 12;

/// The table a [`super::SegmentWriter`] builds while it appends regions.
#[derive(Default)]
pub(crate) struct PositionsTable {
    ends: Vec<u64>,
    crcs: Vec<u32>,
}

impl PositionsTable {
    /// Records the next term's region, which ends at `end` (body offset) and has CRC `crc`.
    pub(crate) fn push(&mut self, end: u64, crc: u32) {
        self.ends.push(end);
        self.crcs.push(crc);
    }

    /// The table and trailer, to append after the last region.
    pub(crate) fn to_bytes(&self) -> Vec<u8> {
        let mut out = Vec::with_capacity(self.ends.len() * PER_TERM + TRAILER);
        for end in &self.ends {
            out.extend_from_slice(&end.to_le_bytes());
        }
        for crc in &self.crcs {
            out.extend_from_slice(&crc.to_le_bytes());
        }
        out.extend_from_slice(&(self.ends.len() as u64).to_le_bytes());
        let crc = crc32c::crc32c(&out);
        out.extend_from_slice(&crc.to_le_bytes());
        out
    }
}

/// A segment's positions, read through its mapped body.
pub(crate) struct PositionsFile<B> {
    body: B,
    name: String,
    terms: u64,
    /// Where the table starts in the body.
    table: usize,
    /// The table's check, done on first use.
    checked: OnceLock<Result<(), String>>,
}

impl<B: AsRef<[u8]>> PositionsFile<B> {
    /// The file `name` with body `body`, of a segment of `terms` terms. Checks the sizes only.
    pub(crate) fn new(body: B, name: &str, terms: u64) -> Result<PositionsFile<B>, IndexError> {
        let bytes = body.as_ref();
        let table_len = usize::try_from(terms)
            .ok()
            .and_then(|t| t.checked_mul(PER_TERM))
            .and_then(|t| t.checked_add(TRAILER))
            .filter(|&t| t <= bytes.len())
            .ok_or_else(|| IndexError::corrupt(name, "positions table past the file"))?;
        let stored_terms = u64::from_le_bytes(
            bytes[bytes.len() - TRAILER..bytes.len() - 4]
                .try_into()
                .expect("8 bytes"),
        );
        if stored_terms != terms {
            return Err(IndexError::corrupt(
                name,
                format!("positions of {stored_terms} terms, the segment has {terms}"),
            ));
        }
        Ok(PositionsFile {
            table: bytes.len() - table_len,
            body,
            name: name.to_string(),
            terms,
            checked: OnceLock::new(),
        })
    }

    /// Checks the table's CRC (once).
    fn check_table(&self) -> Result<(), IndexError> {
        self.checked
            .get_or_init(|| {
                let bytes = self.body.as_ref();
                let covered = &bytes[self.table..bytes.len() - 4];
                let stored = u32::from_le_bytes(bytes[bytes.len() - 4..].try_into().expect("4"));
                if crc32c::crc32c(covered) != stored {
                    return Err("positions table checksum mismatch".to_string());
                }
                Ok(())
            })
            .clone()
            .map_err(|comment| IndexError::corrupt(&self.name, comment))
    }

    fn end(&self, ordinal: u64) -> u64 {
        let at = self.table + ordinal as usize * 8;
        u64::from_le_bytes(self.body.as_ref()[at..at + 8].try_into().expect("8"))
    }

    /// The stored CRC of term `ordinal`'s region.
    pub(crate) fn crc(&self, ordinal: u64) -> Result<u32, IndexError> {
        self.check_table()?;
        if ordinal >= self.terms {
            return Err(IndexError::corrupt(
                &self.name,
                "term ordinal past the table",
            ));
        }
        let at = self.table + self.terms as usize * 8 + ordinal as usize * 4;
        Ok(u32::from_le_bytes(
            self.body.as_ref()[at..at + 4].try_into().expect("4"),
        ))
    }

    /// The region of term `ordinal` (not verified against its CRC), a term of `doc_freq`
    /// postings.
    pub(crate) fn region(
        &self,
        ordinal: u64,
        doc_freq: u32,
    ) -> Result<TermPositions<'_>, IndexError> {
        self.check_table()?;
        if ordinal >= self.terms {
            return Err(IndexError::corrupt(
                &self.name,
                "term ordinal past the table",
            ));
        }
        let start = if ordinal == 0 {
            0
        } else {
            self.end(ordinal - 1)
        };
        let end = self.end(ordinal);
        if start > end || end > self.table as u64 {
            return Err(IndexError::corrupt(
                &self.name,
                format!("positions of term ordinal {ordinal} out of order"),
            ));
        }
        Ok(TermPositions::new(
            &self.body.as_ref()[start as usize..end as usize],
            doc_freq,
        ))
    }

    /// The body.
    pub(crate) fn body(&self) -> &B {
        &self.body
    }

    /// Bytes of the regions (the file's body without its table).
    pub(crate) fn regions_len(&self) -> usize {
        self.table
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn file(regions: &[&[u8]]) -> Vec<u8> {
        let mut body = Vec::new();
        let mut table = PositionsTable::default();
        for region in regions {
            body.extend_from_slice(region);
            table.push(body.len() as u64, crc32c::crc32c(region));
        }
        body.extend_from_slice(&table.to_bytes());
        body
    }

    #[test]
    fn regions_are_found_by_ordinal() {
        let body = file(&[b"ab", b"", b"cde"]);
        let positions = PositionsFile::new(&body[..], "x.pos", 3).expect("open");
        assert_eq!(positions.region(0, 1).unwrap().bytes(), b"ab");
        assert_eq!(positions.region(1, 1).unwrap().bytes(), b"");
        assert_eq!(positions.region(2, 1).unwrap().bytes(), b"cde");
        assert_eq!(positions.crc(2).unwrap(), crc32c::crc32c(b"cde"));
        assert!(positions.region(3, 1).is_err());
        assert_eq!(positions.regions_len(), 5);
    }

    #[test]
    fn a_wrong_term_count_or_a_damaged_table_is_an_error() {
        let body = file(&[b"ab", b"cde"]);
        assert!(PositionsFile::new(&body[..], "x.pos", 3).is_err());
        assert!(PositionsFile::new(&body[..4], "x.pos", 2).is_err());
        for at in 5..body.len() {
            let mut damaged = body.clone();
            damaged[at] ^= 0x10;
            let Ok(positions) = PositionsFile::new(&damaged[..], "x.pos", 2) else {
                continue;
            };
            assert!(positions.region(0, 1).is_err(), "byte {at}");
        }
    }
}
