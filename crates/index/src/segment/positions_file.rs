//! The positions file of a segment (`.pos`, kind `POSI`): every term's positions region (see
//! [`crate::format::positions`]) in term-ordinal order, then a compact table that locates and
//! checks them.
//!
//! ```text
//! body:  region* | region length (VByte) × terms | group × ceil(terms / 64) |
//!        regions bytes u64 | terms u64 | table crc u32
//! group: first region's offset u64 | its lengths' offset u64 | crc u32
//! ```
//!
//! Terms go in groups of [`GROUP`] consecutive ordinals. A group records where its first
//! region starts, where its regions' lengths start in the lengths area (offset from the
//! area's start), and the CRC32C of its regions, which are contiguous. A term's region is
//! found by summing the lengths of the terms before it in its group (at most 63 VBytes). Most
//! terms occur a few times, so a region is a few bytes and its length one byte: the table
//! costs about a byte and a quarter a term, where an offset and a CRC per term would cost 12.
//!
//! The table CRC (of everything after the regions but itself) is verified the first time a
//! process reads positions from the segment; a group's CRC the first time a query reads the
//! positions of a term in it. Only phrase queries open the file, so an index whose users never
//! type a phrase never reads a page of it.

use std::sync::OnceLock;

use crate::format::TermPositions;
use crate::IndexError;

/// Terms per group.
pub(crate) const GROUP: u64 = 64;
/// Bytes of a group entry.
const GROUP_ENTRY: usize = 20;
/// Bytes of the trailer after the groups: `regions bytes u64 | terms u64 | table crc u32`.
const TRAILER: usize = 20;

/// The table a [`super::SegmentWriter`] builds while it appends regions.
#[derive(Default)]
pub(crate) struct PositionsTable {
    lengths: Vec<u8>,
    groups: Vec<u8>,
    terms: u64,
    /// Where the next region starts (body offset), and the open group's CRC so far.
    end: u64,
    crc: u32,
}

impl PositionsTable {
    /// Records the next term's region.
    pub(crate) fn push(&mut self, region: &[u8]) {
        if self.terms.is_multiple_of(GROUP) {
            self.close_group();
            self.groups.extend_from_slice(&self.end.to_le_bytes());
            self.groups
                .extend_from_slice(&(self.lengths.len() as u64).to_le_bytes());
            self.groups.extend_from_slice(&[0; 4]);
        }
        self.crc = crc32c::crc32c_append(self.crc, region);
        let mut len = region.len() as u64;
        while len >= 0x80 {
            self.lengths.push(len as u8 | 0x80);
            len >>= 7;
        }
        self.lengths.push(len as u8);
        self.end += region.len() as u64;
        self.terms += 1;
    }

    /// Writes the open group's CRC into its entry.
    fn close_group(&mut self) {
        if let Some(at) = self.groups.len().checked_sub(4) {
            self.groups[at..].copy_from_slice(&self.crc.to_le_bytes());
        }
        self.crc = 0;
    }

    /// The table and trailer, to append after the last region.
    pub(crate) fn into_bytes(mut self) -> Vec<u8> {
        self.close_group();
        let mut out = self.lengths;
        out.extend_from_slice(&self.groups);
        out.extend_from_slice(&self.end.to_le_bytes());
        out.extend_from_slice(&self.terms.to_le_bytes());
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
    /// Where the groups start in the body.
    groups: usize,
    /// The check of the table, done on first use: where the lengths start, or why the table
    /// is unsound.
    checked: OnceLock<Result<usize, String>>,
}

fn u64_at(bytes: &[u8], at: usize) -> u64 {
    u64::from_le_bytes(bytes[at..at + 8].try_into().expect("8 bytes"))
}

impl<B: AsRef<[u8]>> PositionsFile<B> {
    /// The file `name` with body `body`, of a segment of `terms` terms. Checks the sizes only.
    pub(crate) fn new(body: B, name: &str, terms: u64) -> Result<PositionsFile<B>, IndexError> {
        let bytes = body.as_ref();
        let groups = usize::try_from(terms.div_ceil(GROUP))
            .ok()
            .and_then(|g| g.checked_mul(GROUP_ENTRY))
            .and_then(|g| g.checked_add(TRAILER))
            .filter(|&t| t <= bytes.len())
            .ok_or_else(|| IndexError::corrupt(name, "positions table past the file"))?;
        let stored_terms = u64_at(bytes, bytes.len() - 12);
        if stored_terms != terms {
            return Err(IndexError::corrupt(
                name,
                format!("positions of {stored_terms} terms, the segment has {terms}"),
            ));
        }
        Ok(PositionsFile {
            groups: bytes.len() - groups,
            body,
            name: name.to_string(),
            terms,
            checked: OnceLock::new(),
        })
    }

    /// The body.
    pub(crate) fn body(&self) -> &B {
        &self.body
    }

    /// Checks the table's CRC and layout (once); returns where the lengths start (the
    /// regions' end).
    fn lengths_start(&self) -> Result<usize, IndexError> {
        self.checked
            .get_or_init(|| {
                let bytes = self.body.as_ref();
                let regions = u64_at(bytes, bytes.len() - TRAILER);
                let regions = usize::try_from(regions)
                    .ok()
                    .filter(|&r| r <= self.groups)
                    .ok_or("positions regions past the table")?;
                let stored = u32::from_le_bytes(bytes[bytes.len() - 4..].try_into().expect("4"));
                if crc32c::crc32c(&bytes[regions..bytes.len() - 4]) != stored {
                    return Err("positions table checksum mismatch".to_string());
                }
                Ok(regions)
            })
            .clone()
            .map_err(|comment| IndexError::corrupt(&self.name, comment))
    }

    /// The region of term `ordinal` (not verified against its group's CRC), a term of
    /// `doc_freq` postings, and the group it is in.
    pub(crate) fn region(
        &self,
        ordinal: u64,
        doc_freq: u32,
    ) -> Result<(TermPositions<'_>, u64), IndexError> {
        let lengths = self.lengths_start()?;
        let (start, end) = self.locate(ordinal, lengths).ok_or_else(|| {
            IndexError::corrupt(
                &self.name,
                format!("positions of term ordinal {ordinal} out of order"),
            )
        })?;
        Ok((
            TermPositions::new(&self.body.as_ref()[start..end], doc_freq),
            ordinal / GROUP,
        ))
    }

    /// The byte range of term `ordinal`'s region.
    fn locate(&self, ordinal: u64, lengths: usize) -> Option<(usize, usize)> {
        if ordinal >= self.terms {
            return None;
        }
        let bytes = self.body.as_ref();
        let entry = self.groups + (ordinal / GROUP) as usize * GROUP_ENTRY;
        let mut start = usize::try_from(u64_at(bytes, entry)).ok()?;
        let mut cursor = lengths.checked_add(usize::try_from(u64_at(bytes, entry + 8)).ok()?)?;
        for _ in 0..ordinal % GROUP {
            let (len, next) = read_vbyte(bytes, cursor, self.groups)?;
            start = start.checked_add(usize::try_from(len).ok()?)?;
            cursor = next;
        }
        let (len, _) = read_vbyte(bytes, cursor, self.groups)?;
        let end = start.checked_add(usize::try_from(len).ok()?)?;
        (end <= lengths).then_some((start, end))
    }

    /// The bytes and stored CRC of group `group`'s regions.
    pub(crate) fn group(&self, group: u64) -> Result<(&[u8], u32), IndexError> {
        let lengths = self.lengths_start()?;
        let first = group * GROUP;
        let last = (first + GROUP).min(self.terms) - 1;
        let bad =
            || IndexError::corrupt(&self.name, format!("positions group {group} out of order"));
        let (start, _) = self.locate(first, lengths).ok_or_else(bad)?;
        let (_, end) = self.locate(last, lengths).ok_or_else(bad)?;
        let bytes = self.body.as_ref();
        let entry = self.groups + group as usize * GROUP_ENTRY;
        let crc = u32::from_le_bytes(bytes[entry + 16..entry + 20].try_into().expect("4"));
        Ok((bytes.get(start..end).ok_or_else(bad)?, crc))
    }

    /// Bytes of the regions (the file's body without its table).
    #[cfg(test)]
    fn regions_len(&self) -> usize {
        self.lengths_start().unwrap_or(0)
    }
}

/// The VByte at `at` (before `limit`) and the offset after it.
fn read_vbyte(bytes: &[u8], mut at: usize, limit: usize) -> Option<(u64, usize)> {
    let value = crate::format::vbyte::read_vbyte(bytes.get(..limit)?, &mut at)?;
    Some((value, at))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn file(regions: &[Vec<u8>]) -> Vec<u8> {
        let mut body = Vec::new();
        let mut table = PositionsTable::default();
        for region in regions {
            body.extend_from_slice(region);
            table.push(region);
        }
        body.extend_from_slice(&table.into_bytes());
        body
    }

    fn regions(n: usize) -> Vec<Vec<u8>> {
        (0..n)
            .map(|i| (0..(i * 7 % 300)).map(|b| (b + i) as u8).collect())
            .collect()
    }

    #[test]
    fn regions_are_found_by_ordinal_and_groups_carry_their_crc() {
        for n in [0, 1, 63, 64, 65, 200] {
            let regions = regions(n);
            let body = file(&regions);
            let positions = PositionsFile::new(&body[..], "x.pos", n as u64).expect("open");
            for (i, region) in regions.iter().enumerate() {
                let (got, group) = positions.region(i as u64, 1).unwrap();
                assert_eq!(got.bytes(), &region[..], "{n} terms, term {i}");
                assert_eq!(group, i as u64 / GROUP);
            }
            assert!(positions.region(n as u64, 1).is_err());
            for g in 0..(n as u64).div_ceil(GROUP) {
                let (bytes, crc) = positions.group(g).unwrap();
                let want: Vec<u8> = regions[(g * GROUP) as usize..]
                    .iter()
                    .take(GROUP as usize)
                    .flatten()
                    .copied()
                    .collect();
                assert_eq!(bytes, &want[..]);
                assert_eq!(crc, crc32c::crc32c(&want));
            }
            let total: usize = regions.iter().map(Vec::len).sum();
            assert_eq!(positions.regions_len(), total);
        }
    }

    #[test]
    fn a_wrong_term_count_or_a_damaged_table_is_an_error() {
        let regions = regions(70);
        let body = file(&regions);
        assert!(PositionsFile::new(&body[..], "x.pos", 71).is_err());
        assert!(PositionsFile::new(&body[..4], "x.pos", 70).is_err());
        let total: usize = regions.iter().map(Vec::len).sum();
        for at in total..body.len() {
            let mut damaged = body.clone();
            damaged[at] ^= 0x10;
            let Ok(positions) = PositionsFile::new(&damaged[..], "x.pos", 70) else {
                continue;
            };
            assert!(positions.region(0, 1).is_err(), "byte {at}");
        }
    }
}
