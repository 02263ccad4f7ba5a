//! A sorted term list: the term dictionary of a segment flushed only to be merged.
//!
//! Every other segment keeps an FST (`fst::Map`), which gives fast lookups in little space but
//! is costly to build: finding the states it can share takes about a quarter of a flush. A
//! segment flushed ahead of a merge is read by that merge once, in term order, and a term list
//! is what such a reader needs: written in one pass, read by a cursor that copies a few bytes
//! a term. It still answers lookups (a binary search over its blocks, then a scan of one
//! block), so an index that an interrupted build left stays searchable.
//!
//! ```text
//! body:  block* | block offset u64 × blocks | terms u64
//! block: first term:   length VByte | bytes
//!        later terms:  shared prefix VByte | suffix length VByte | suffix bytes   (up to 15)
//! ```
//!
//! Terms are in strictly increasing byte order, [`BLOCK_TERMS`] to a block (the last may have
//! fewer); a term's ordinal is its rank. Block offsets are from the body's start. A reader
//! checks the whole list when it opens it (every block decodes, every term follows the one
//! before), so its cursors and lookups can trust what they walk.

use std::io::Write;

use super::vbyte::{read_vbyte, write_vbyte};

/// Terms per block: a lookup scans at most this many.
pub const BLOCK_TERMS: u64 = 16;

/// Why a term list cannot be read.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("term list: {0}")]
pub struct TermListError(&'static str);

/// Writes a term list, a term at a time.
pub struct TermListWriter<W: Write> {
    out: W,
    buffer: Vec<u8>,
    written: u64,
    offsets: Vec<u64>,
    last: Vec<u8>,
    terms: u64,
}

impl<W: Write> TermListWriter<W> {
    /// A writer of a list into `out`.
    pub fn new(out: W) -> TermListWriter<W> {
        TermListWriter {
            out,
            buffer: Vec::with_capacity(1 << 16),
            written: 0,
            offsets: Vec::new(),
            last: Vec::new(),
            terms: 0,
        }
    }

    /// Terms written.
    pub fn len(&self) -> u64 {
        self.terms
    }

    /// True before the first term.
    pub fn is_empty(&self) -> bool {
        self.terms == 0
    }

    /// Appends `term`, which must follow every term before it.
    fn insert(&mut self, term: &[u8]) -> Result<(), TermListError> {
        if self.terms > 0 && term <= self.last.as_slice() {
            return Err(TermListError("terms out of order"));
        }
        if self.terms.is_multiple_of(BLOCK_TERMS) {
            self.offsets.push(self.written + self.buffer.len() as u64);
            write_vbyte(term.len() as u64, &mut self.buffer);
            self.buffer.extend_from_slice(term);
        } else {
            let shared = shared_prefix(&self.last, term);
            write_vbyte(shared as u64, &mut self.buffer);
            write_vbyte((term.len() - shared) as u64, &mut self.buffer);
            self.buffer.extend_from_slice(&term[shared..]);
        }
        self.last.clear();
        self.last.extend_from_slice(term);
        self.terms += 1;
        Ok(())
    }

    fn drain(&mut self) -> std::io::Result<()> {
        self.out.write_all(&self.buffer)?;
        self.written += self.buffer.len() as u64;
        self.buffer.clear();
        Ok(())
    }

    /// Appends `term` and writes out what is buffered once it passes 64 KiB.
    pub fn push(&mut self, term: &[u8]) -> std::io::Result<()> {
        self.insert(term)
            .map_err(|e| std::io::Error::new(std::io::ErrorKind::InvalidInput, e))?;
        if self.buffer.len() >= 1 << 16 {
            self.drain()?;
        }
        Ok(())
    }

    /// Writes the block table and the term count, and returns the output.
    pub fn finish(mut self) -> std::io::Result<W> {
        for offset in std::mem::take(&mut self.offsets) {
            self.buffer.extend_from_slice(&offset.to_le_bytes());
        }
        self.buffer.extend_from_slice(&self.terms.to_le_bytes());
        self.drain()?;
        Ok(self.out)
    }
}

fn shared_prefix(a: &[u8], b: &[u8]) -> usize {
    a.iter().zip(b).take_while(|(x, y)| x == y).count()
}

/// A term list, checked whole when opened.
pub struct TermList<D> {
    body: D,
    /// Where the blocks end (the block table starts).
    blocks_end: usize,
    terms: u64,
}

impl<D: AsRef<[u8]>> TermList<D> {
    /// Opens the list in `body`, checking every block.
    pub fn new(body: D) -> Result<TermList<D>, TermListError> {
        let bytes = body.as_ref();
        let short = TermListError("truncated");
        let count_at = bytes.len().checked_sub(8).ok_or(short.clone())?;
        let terms = u64::from_le_bytes(bytes[count_at..].try_into().expect("8 bytes"));
        let blocks = terms.div_ceil(BLOCK_TERMS);
        let table = blocks
            .checked_mul(8)
            .and_then(|t| usize::try_from(t).ok())
            .filter(|&t| t <= count_at)
            .ok_or(short)?;
        let list = TermList {
            blocks_end: count_at - table,
            body,
            terms,
        };
        list.check()?;
        Ok(list)
    }

    /// Walks every block: offsets in order and contiguous, every term decodes and follows the
    /// one before.
    fn check(&self) -> Result<(), TermListError> {
        let mut cursor = Cursor::default();
        let mut last = Vec::new();
        for ordinal in 0..self.terms {
            if ordinal.is_multiple_of(BLOCK_TERMS)
                && self.block_offset(ordinal / BLOCK_TERMS) != Some(cursor.at)
            {
                return Err(TermListError("block table disagrees with the blocks"));
            }
            cursor
                .step(self.blocks(), ordinal)
                .ok_or(TermListError("malformed term"))?;
            if ordinal > 0 && cursor.term <= last {
                return Err(TermListError("terms out of order"));
            }
            last.clone_from(&cursor.term);
        }
        if cursor.at != self.blocks_end {
            return Err(TermListError("bytes after the last term"));
        }
        Ok(())
    }

    fn blocks(&self) -> &[u8] {
        &self.body.as_ref()[..self.blocks_end]
    }

    fn block_offset(&self, block: u64) -> Option<usize> {
        let at = self.blocks_end + usize::try_from(block).ok()? * 8;
        let bytes = self.body.as_ref().get(at..at + 8)?;
        usize::try_from(u64::from_le_bytes(bytes.try_into().ok()?)).ok()
    }

    /// The first term of block `block`.
    fn block_head(&self, block: u64) -> &[u8] {
        let mut at = self.block_offset(block).unwrap_or(0);
        let blocks = self.blocks();
        let len = read_vbyte(blocks, &mut at).unwrap_or(0) as usize;
        blocks.get(at..at + len).unwrap_or(&[])
    }

    /// The list's body, as given to [`TermList::new`].
    pub fn inner(&self) -> &D {
        &self.body
    }

    /// Terms in the list.
    pub fn len(&self) -> u64 {
        self.terms
    }

    /// True when the list has no term.
    pub fn is_empty(&self) -> bool {
        self.terms == 0
    }

    /// The block that holds `term` if any term does: the last whose first term is at most it.
    fn block_of(&self, term: &[u8]) -> Option<u64> {
        let blocks = self.terms.div_ceil(BLOCK_TERMS);
        let (mut low, mut high) = (0, blocks);
        while low < high {
            let mid = low + (high - low) / 2;
            if self.block_head(mid) <= term {
                low = mid + 1;
            } else {
                high = mid;
            }
        }
        low.checked_sub(1)
    }

    /// A cursor before block `block`'s first term.
    fn cursor_at_block(&self, block: u64) -> Cursor {
        Cursor {
            at: self.block_offset(block).unwrap_or(self.blocks_end),
            ordinal: block * BLOCK_TERMS,
            term: Vec::new(),
        }
    }

    /// The ordinal of `term`, if the list has it.
    pub fn get(&self, term: &[u8]) -> Option<u64> {
        let block = self.block_of(term)?;
        let mut cursor = self.cursor_at_block(block);
        let end = self.terms.min((block + 1) * BLOCK_TERMS);
        while cursor.ordinal < end {
            let ordinal = cursor.ordinal;
            cursor.step(self.blocks(), ordinal)?;
            match cursor.term.as_slice().cmp(term) {
                std::cmp::Ordering::Less => {}
                std::cmp::Ordering::Equal => return Some(ordinal),
                std::cmp::Ordering::Greater => return None,
            }
        }
        None
    }

    /// Term `ordinal`, if the list has that many.
    pub fn term_at(&self, ordinal: u64) -> Option<Vec<u8>> {
        if ordinal >= self.terms {
            return None;
        }
        let mut cursor = self.cursor_at_block(ordinal / BLOCK_TERMS);
        while cursor.ordinal <= ordinal {
            let at = cursor.ordinal;
            cursor.step(self.blocks(), at)?;
        }
        Some(cursor.term)
    }

    /// The terms from `from` (inclusive, the first term when `None`) to `to` (exclusive, the
    /// end when `None`), in order, with their ordinals.
    pub fn range(&self, from: Option<&[u8]>, to: Option<&[u8]>) -> TermListStream<'_> {
        let mut stream = TermListStream {
            blocks: self.blocks(),
            terms: self.terms,
            cursor: self.cursor_at_block(0),
            to: to.map(<[u8]>::to_vec),
            pending: false,
        };
        let Some(from) = from else { return stream };
        if let Some(block) = self.block_of(from) {
            stream.cursor = self.cursor_at_block(block);
        }
        // Step to the first term at or after `from`, and serve it next.
        while stream.cursor.ordinal < self.terms {
            let ordinal = stream.cursor.ordinal;
            if stream.cursor.step(stream.blocks, ordinal).is_none() {
                stream.cursor.ordinal = self.terms;
                break;
            }
            if stream.cursor.term.as_slice() >= from {
                stream.pending = true;
                break;
            }
        }
        stream
    }
}

/// Where a walk of the blocks stands: the last term decoded, the next term's ordinal and
/// where its bytes start.
#[derive(Default)]
struct Cursor {
    at: usize,
    ordinal: u64,
    term: Vec<u8>,
}

impl Cursor {
    /// Decodes term `ordinal` (the cursor's next) into `term`.
    fn step(&mut self, blocks: &[u8], ordinal: u64) -> Option<()> {
        let mut at = self.at;
        let shared = if ordinal.is_multiple_of(BLOCK_TERMS) {
            0
        } else {
            usize::try_from(read_vbyte(blocks, &mut at)?).ok()?
        };
        let suffix = usize::try_from(read_vbyte(blocks, &mut at)?).ok()?;
        if shared > self.term.len() {
            return None;
        }
        let bytes = blocks.get(at..at.checked_add(suffix)?)?;
        self.term.truncate(shared);
        self.term.extend_from_slice(bytes);
        self.at = at + suffix;
        self.ordinal = ordinal + 1;
        Some(())
    }
}

/// The terms of a [`TermList`] in order, with their ordinals (an [`fst::Streamer`]).
pub struct TermListStream<'a> {
    blocks: &'a [u8],
    terms: u64,
    cursor: Cursor,
    to: Option<Vec<u8>>,
    /// Whether the cursor's term is yet to be served (a range's first).
    pending: bool,
}

impl<'a> fst::Streamer<'a> for TermListStream<'_> {
    type Item = (&'a [u8], u64);

    fn next(&'a mut self) -> Option<(&'a [u8], u64)> {
        if self.pending {
            self.pending = false;
        } else {
            if self.cursor.ordinal >= self.terms {
                return None;
            }
            let ordinal = self.cursor.ordinal;
            if self.cursor.step(self.blocks, ordinal).is_none() {
                self.cursor.ordinal = self.terms; // checked at open; never here
                return None;
            }
        }
        if self
            .to
            .as_deref()
            .is_some_and(|to| self.cursor.term.as_slice() >= to)
        {
            self.cursor.ordinal = self.terms;
            return None;
        }
        Some((self.cursor.term.as_slice(), self.cursor.ordinal - 1))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use fst::Streamer;
    use proptest::prelude::*;
    use std::collections::BTreeSet;

    fn list_of(terms: &BTreeSet<Vec<u8>>) -> Vec<u8> {
        let mut writer = TermListWriter::new(Vec::new());
        for term in terms {
            writer.push(term).unwrap();
        }
        writer.finish().unwrap()
    }

    fn collect(mut stream: TermListStream<'_>) -> Vec<(Vec<u8>, u64)> {
        let mut out = Vec::new();
        while let Some((term, ordinal)) = stream.next() {
            out.push((term.to_vec(), ordinal));
        }
        out
    }

    fn terms() -> impl Strategy<Value = BTreeSet<Vec<u8>>> {
        // Few distinct bytes, so that terms share prefixes and probes hit and miss.
        prop::collection::btree_set(prop::collection::vec(0u8..4, 0..7), 0..120)
    }

    proptest! {
        /// Lookups, ordinals and ranges agree with a sorted set.
        #[test]
        fn agrees_with_a_sorted_set(
            terms in terms(),
            probes in prop::collection::vec(prop::collection::vec(0u8..4, 0..7), 0..20),
        ) {
            let body = list_of(&terms);
            let list = TermList::new(body.as_slice()).unwrap();
            let sorted: Vec<Vec<u8>> = terms.iter().cloned().collect();
            prop_assert_eq!(list.len(), sorted.len() as u64);
            for (ordinal, term) in sorted.iter().enumerate() {
                prop_assert_eq!(list.get(term), Some(ordinal as u64));
                prop_assert_eq!(list.term_at(ordinal as u64), Some(term.clone()));
            }
            prop_assert_eq!(list.term_at(sorted.len() as u64), None);
            let all: Vec<(Vec<u8>, u64)> =
                sorted.iter().cloned().zip(0..).collect();
            prop_assert_eq!(collect(list.range(None, None)), all.clone());
            for probe in &probes {
                prop_assert_eq!(list.get(probe), sorted.binary_search(probe).ok().map(|o| o as u64));
                for to in &probes {
                    let want: Vec<_> = all
                        .iter()
                        .filter(|(t, _)| t >= probe && t < to)
                        .cloned()
                        .collect();
                    prop_assert_eq!(collect(list.range(Some(probe), Some(to))), want);
                }
                let from: Vec<_> = all.iter().filter(|(t, _)| t >= probe).cloned().collect();
                prop_assert_eq!(collect(list.range(Some(probe), None)), from);
            }
        }

        /// A damaged list is refused or still reads as a sorted list; nothing panics.
        #[test]
        fn damage_never_panics(
            terms in terms(),
            flips in prop::collection::vec((any::<usize>(), any::<u8>()), 1..6),
            cut in any::<usize>(),
        ) {
            let mut body = list_of(&terms);
            for (at, byte) in flips {
                if !body.is_empty() {
                    let at = at % body.len();
                    body[at] ^= byte;
                }
            }
            let truncated = &body[..cut % (body.len() + 1)];
            for bytes in [body.as_slice(), truncated] {
                if let Ok(list) = TermList::new(bytes) {
                    let read = collect(list.range(None, None));
                    prop_assert_eq!(read.len() as u64, list.len());
                    prop_assert!(read.windows(2).all(|w| w[0].0 < w[1].0));
                    for (term, ordinal) in &read {
                        prop_assert_eq!(list.get(term), Some(*ordinal));
                    }
                }
            }
        }
    }

    #[test]
    fn out_of_order_terms_are_refused() {
        let mut writer = TermListWriter::new(Vec::new());
        writer.push(b"b").unwrap();
        assert!(writer.push(b"a").is_err());
        assert!(writer.push(b"b").is_err());
    }

    #[test]
    fn an_empty_list_reads() {
        let body = list_of(&BTreeSet::new());
        let list = TermList::new(body.as_slice()).unwrap();
        assert!(list.is_empty());
        assert_eq!(list.get(b""), None);
        assert!(collect(list.range(None, None)).is_empty());
    }
}
