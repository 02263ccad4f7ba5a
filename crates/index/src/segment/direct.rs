//! The "uncompressed direct" postings of a segment: every list decoded once, at open time, into
//! plain arrays in process memory (the original study's Lucene part calls this the direct
//! postings format: several times the memory of the compressed index, no decoding at query
//! time). Query cursors then copy blocks out of these arrays instead of decoding them.

use crate::format::TermInfo;
use crate::IndexError;

use super::SegmentReader;

/// A segment's postings, decoded.
pub struct DirectPostings {
    /// Every term's DIDs, in term-ordinal order.
    docs: Vec<u32>,
    /// Every term's frequencies (true values, not minus one).
    freqs: Vec<u32>,
    /// Per term ordinal: its postings-file offset (increasing) and its first index in `docs`.
    postings_offsets: Vec<u64>,
    starts: Vec<u64>,
}

impl DirectPostings {
    /// Decodes every list of `segment`.
    pub fn load(segment: &SegmentReader) -> Result<DirectPostings, IndexError> {
        let meta = segment.meta();
        let postings = usize::try_from(meta.postings)
            .map_err(|_| IndexError::corrupt(&meta.name, "too many postings"))?;
        let mut direct = DirectPostings {
            docs: Vec::with_capacity(postings),
            freqs: Vec::with_capacity(postings),
            postings_offsets: Vec::with_capacity(meta.terms as usize),
            starts: Vec::with_capacity(meta.terms as usize),
        };
        let (mut docs, mut freqs) = (Vec::new(), Vec::new());
        for ordinal in 0..meta.terms {
            let entry = segment.entry(ordinal)?;
            let info = entry.info;
            segment.read_postings(&entry, &mut docs, &mut freqs)?;
            direct.postings_offsets.push(info.postings_offset);
            direct.starts.push(direct.docs.len() as u64);
            direct.docs.extend_from_slice(&docs);
            direct.freqs.extend_from_slice(&freqs);
        }
        Ok(direct)
    }

    /// Bytes held.
    pub fn bytes(&self) -> usize {
        (self.docs.capacity() + self.freqs.capacity()) * 4
            + (self.postings_offsets.capacity() + self.starts.capacity()) * 8
    }

    /// The decoded DIDs and frequencies of `info`'s list.
    pub fn list(&self, info: &TermInfo) -> Option<(&[u32], &[u32])> {
        let ordinal = self
            .postings_offsets
            .binary_search(&info.postings_offset)
            .ok()?;
        let start = self.starts[ordinal] as usize;
        let end = start + info.doc_freq as usize;
        Some((self.docs.get(start..end)?, self.freqs.get(start..end)?))
    }
}
