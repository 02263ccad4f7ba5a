//! Skip entries: one per 256-posting block, so that queries can find, bound and skip blocks
//! without decoding them.

use crate::IndexError;

/// One block's skip entry.
///
/// ```text
/// first_doc: u32 | last_doc: u32 | docs_offset: u32 | freqs_offset: u32 |
/// max_freq: u32 | best_freq: u32 | min_norm: u8 | best_norm: u8    (26 bytes, little-endian)
/// ```
/// Offsets are relative to the term's `postings_offset`. `first_doc` is also the base the
/// block's d-gaps are taken against. `max_freq` and `min_norm` bound the BM25 score of any
/// posting of the block (the score grows with frequency and falls with document length).
/// Lengths are kept as their norm bytes (Lucene's one-byte norms, which its impacts keep too):
/// a byte stands for the shortest length it encodes, which scores exactly as the document
/// does under Lucene's norms and bounds its score under exact lengths.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct SkipEntry {
    /// Smallest DID of the block.
    pub first_doc: u32,
    /// Largest DID of the block.
    pub last_doc: u32,
    /// Offset of the block's DIDs from the term's postings start.
    pub docs_offset: u32,
    /// Offset of the block's frequencies from the term's postings start.
    pub freqs_offset: u32,
    /// Largest frequency in the block.
    pub max_freq: u32,
    /// The norm byte of the shortest document length in the block.
    pub min_norm: u8,
    /// Frequency of the block's best posting: the one with the highest BM25 score under the
    /// segment's own statistics (k1 1.2, b 0.75, Lucene norms, the segment's average length).
    pub best_freq: u32,
    /// The norm byte of that posting's document length.
    pub best_norm: u8,
}

impl SkipEntry {
    /// Bytes of one entry.
    pub const LEN: usize = 26;

    /// Appends the entry.
    pub fn write_to(&self, out: &mut Vec<u8>) {
        out.extend_from_slice(&self.to_bytes());
    }

    /// Reads entry `index` of a skip body.
    pub fn read(body: &[u8], index: usize, file: &str) -> Result<SkipEntry, IndexError> {
        let at = index
            .checked_mul(Self::LEN)
            .and_then(|start| body.get(start..start + Self::LEN))
            .ok_or_else(|| IndexError::corrupt(file, format!("skip entry {index} past the end")))?;
        Ok(SkipEntry::from_bytes(at.try_into().expect("26 bytes")))
    }

    /// The `last_doc` field of an encoded entry, without decoding the rest.
    #[inline]
    pub fn last_doc_of(bytes: &[u8; Self::LEN]) -> u32 {
        u32::from_le_bytes(bytes[4..8].try_into().expect("4 bytes"))
    }

    /// Decodes one entry.
    #[inline]
    pub fn from_bytes(at: &[u8; Self::LEN]) -> SkipEntry {
        let u32_at =
            |i: usize| u32::from_le_bytes(at[i * 4..i * 4 + 4].try_into().expect("4 bytes"));
        SkipEntry {
            first_doc: u32_at(0),
            last_doc: u32_at(1),
            docs_offset: u32_at(2),
            freqs_offset: u32_at(3),
            max_freq: u32_at(4),
            min_norm: at[24],
            best_freq: u32_at(5),
            best_norm: at[25],
        }
    }
}

impl SkipEntry {
    /// The entry's 26 encoded bytes.
    pub fn to_bytes(&self) -> [u8; Self::LEN] {
        // Built in place: a query opening a one-block term calls this, so no allocation.
        let mut bytes = [0u8; Self::LEN];
        let fields = [
            self.first_doc,
            self.last_doc,
            self.docs_offset,
            self.freqs_offset,
            self.max_freq,
            self.best_freq,
        ];
        for (at, v) in bytes.chunks_exact_mut(4).zip(fields) {
            at.copy_from_slice(&v.to_le_bytes());
        }
        bytes[24] = self.min_norm;
        bytes[25] = self.best_norm;
        bytes
    }
}

/// A term's skip entries, encoded: read in place from the skip file, or the one entry that a
/// term of a single block keeps in its record. Either way a slice of entries.
#[derive(Debug, Clone, Copy)]
pub enum SkipEntries<'a> {
    /// Entries of the skip file.
    Stored(&'a [[u8; SkipEntry::LEN]]),
    /// The entry of a term of one block.
    Single([[u8; SkipEntry::LEN]; 1]),
}

impl std::ops::Deref for SkipEntries<'_> {
    type Target = [[u8; SkipEntry::LEN]];

    #[inline]
    fn deref(&self) -> &Self::Target {
        match self {
            SkipEntries::Stored(entries) => entries,
            SkipEntries::Single(entry) => entry,
        }
    }
}
