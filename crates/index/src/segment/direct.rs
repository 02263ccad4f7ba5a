//! The "uncompressed direct" postings of a segment: every list decoded once, at open time, into
//! plain arrays in process memory (the original study's Lucene part calls this the direct
//! postings format: several times the memory of the compressed index, no decoding at query
//! time). Query cursors then copy blocks out of these arrays instead of decoding them.
//!
//! A term whose metadata or postings fail their checks is left out rather than failing the
//! load: one damaged byte must not take down every query of the index. A cursor finds no
//! decoded list for such a term and reads it from the postings file as the mapped mode does,
//! which checks it again and fails that query alone, with the error naming the file and the
//! term.

use crate::search::TermEntry;
use crate::IndexError;

use super::SegmentReader;

/// A segment's postings, decoded.
pub struct DirectPostings {
    /// Every term's DIDs, in term-ordinal order.
    docs: Vec<u32>,
    /// Every term's frequencies (true values, not minus one).
    freqs: Vec<u32>,
    /// Per term ordinal, and one past the last: the first index of its postings in `docs`. A
    /// term left out holds none.
    starts: Vec<u64>,
    /// The ordinals of the terms left out because their bytes failed their checks.
    damaged: Vec<u64>,
}

impl DirectPostings {
    /// Decodes every list of `segment` whose metadata and postings pass their checks.
    pub fn load(segment: &SegmentReader) -> Result<DirectPostings, IndexError> {
        let meta = segment.meta();
        let postings = usize::try_from(meta.postings)
            .map_err(|_| IndexError::corrupt(&meta.name, "too many postings"))?;
        let terms = usize::try_from(meta.terms)
            .map_err(|_| IndexError::corrupt(&meta.name, "too many terms"))?;
        let mut direct = DirectPostings {
            docs: Vec::with_capacity(postings),
            freqs: Vec::with_capacity(postings),
            starts: Vec::with_capacity(terms + 1),
            damaged: Vec::new(),
        };
        let (mut docs, mut freqs) = (Vec::new(), Vec::new());
        let mut entries = segment.entries_in_order();
        for ordinal in 0..meta.terms {
            direct.starts.push(direct.docs.len() as u64);
            let read = entries
                .get(ordinal)
                .and_then(|entry| segment.read_postings(&entry, &mut docs, &mut freqs));
            match read {
                Ok(()) => {
                    direct.docs.extend_from_slice(&docs);
                    direct.freqs.extend_from_slice(&freqs);
                }
                Err(e) if e.is_damage() => direct.damaged.push(ordinal),
                Err(e) => return Err(e),
            }
        }
        direct.starts.push(direct.docs.len() as u64);
        Ok(direct)
    }

    /// Bytes held.
    pub fn bytes(&self) -> usize {
        (self.docs.capacity() + self.freqs.capacity()) * 4
            + (self.starts.capacity() + self.damaged.capacity()) * 8
    }

    /// The ordinals of the terms left out at load because their bytes failed their checks.
    pub fn damaged_terms(&self) -> &[u64] {
        &self.damaged
    }

    /// The decoded DIDs and frequencies of `entry`'s list; `None` for a term left out.
    pub fn list(&self, entry: &TermEntry) -> Option<(&[u32], &[u32])> {
        let ordinal = usize::try_from(entry.ordinal).ok()?;
        let start = usize::try_from(*self.starts.get(ordinal)?).ok()?;
        let end = usize::try_from(*self.starts.get(ordinal + 1)?).ok()?;
        if end - start != entry.info.doc_freq as usize {
            return None;
        }
        Some((self.docs.get(start..end)?, self.freqs.get(start..end)?))
    }
}
