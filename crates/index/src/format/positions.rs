//! A term's positions: where in each document the term occurs, for phrase queries.
//!
//! Positions follow the posting blocks: the positions of a posting block's documents are one
//! run of values (each document's positions in order, the first as it is and the rest as gaps
//! from the one before, less one), cut into chunks of [`BLOCK_LEN`] values coded by
//! `pfor-delta` whatever the segment's codec: position gaps are skewed (mostly small, some
//! large), which its exceptions code in the fewest bytes, and a phrase query decodes few
//! chunks, so their size matters more than their decoding speed. A segment flushed only to be
//! merged codes them with `bitpack-delta-simd` instead ([`PositionsCodec`]): the merge reads
//! each position once, and its flush encodes faster (no exception analysis).
//!
//! A phrase query checks few of a block's documents, so a reader finds a document's positions
//! without decoding the block's others: the block's frequencies (which the query decoded
//! anyway) say how many values precede the document, which names the chunk; only that chunk
//! (or the few a long document spans) is decoded.
//!
//! A term's region (see `docs/format.md`, "Positions"):
//!
//! ```text
//! block start u32 × blocks   (omitted when the term has one block)
//! per block: chunk end u32 × chunks   (omitted when the block has one chunk) | chunk*
//! ```
//!
//! Block starts are relative to the region, chunk ends to the block. Most terms have one block
//! of one chunk and pay no table at all.

use std::ops::Range;
use std::sync::OnceLock;

use apcache_codec::{BlockCodec, CodecError, CodecKind, Isa, BLOCK_LEN};
use serde::{Deserialize, Serialize};

/// Why a positions region cannot be read.
#[derive(Debug, thiserror::Error)]
pub enum PositionsError {
    /// The region's tables or lengths disagree with the term's postings.
    #[error("{0}")]
    Malformed(&'static str),
    /// A chunk does not decode.
    #[error(transparent)]
    Codec(#[from] CodecError),
}

/// The codec of a segment's positions chunks (the manifest records it; absent: `pfor-delta`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum PositionsCodec {
    /// `pfor-delta` frequency blocks: the fewest bytes for skewed gaps. Every segment that
    /// queries read keeps it.
    #[default]
    PforDelta,
    /// `bitpack-delta-simd` frequency blocks: faster to encode (no exception analysis), about
    /// a sixth larger (the four corpus parts' flushed segments hold 215 MB of positions, their
    /// merged segment 182 MB in `pfor-delta`). A segment flushed only to be merged keeps it (the
    /// merge decodes it once).
    BitpackDeltaSimd,
}

impl PositionsCodec {
    /// True for the default, which the manifest leaves unsaid.
    pub fn is_default(&self) -> bool {
        *self == PositionsCodec::default()
    }

    /// The block codec that codes the chunks.
    pub fn codec(self) -> &'static dyn BlockCodec {
        static PFOR: OnceLock<Box<dyn BlockCodec>> = OnceLock::new();
        static BITPACK: OnceLock<Box<dyn BlockCodec>> = OnceLock::new();
        match self {
            PositionsCodec::PforDelta => &**PFOR.get_or_init(|| CodecKind::PforDelta.build()),
            PositionsCodec::BitpackDeltaSimd => {
                &**BITPACK.get_or_init(|| CodecKind::BitpackDeltaSimd.build())
            }
        }
    }
}

/// Encodes the positions of one term into `out` with `codec`: `freqs` are the term's frequencies (all its
/// postings, in order), `positions` every posting's positions in order, increasing within a
/// posting (`freqs` sum to its length).
pub fn encode_term_positions(
    codec: PositionsCodec,
    freqs: &[u32],
    positions: &[u32],
    out: &mut Vec<u8>,
) -> Result<(), PositionsError> {
    let codec = codec.codec();
    let total: u64 = freqs.iter().map(|&f| u64::from(f)).sum();
    if total != positions.len() as u64 {
        return Err(PositionsError::Malformed(
            "frequencies and positions disagree",
        ));
    }
    let region_start = out.len();
    let blocks = freqs.len().div_ceil(BLOCK_LEN);
    let block_table = if blocks > 1 { blocks } else { 0 };
    out.resize(region_start + 4 * block_table, 0);
    let mut values = Vec::new();
    let mut at = 0usize;
    for (b, block_freqs) in freqs.chunks(BLOCK_LEN).enumerate() {
        let block_start = out.len();
        if block_table > 0 {
            let relative = (block_start - region_start) as u32;
            out[region_start + 4 * b..region_start + 4 * b + 4]
                .copy_from_slice(&relative.to_le_bytes());
        }
        values.clear();
        for &freq in block_freqs {
            let doc_positions = &positions[at..at + freq as usize];
            at += freq as usize;
            let mut previous = 0u32;
            for (i, &p) in doc_positions.iter().enumerate() {
                if i > 0 && p <= previous {
                    return Err(PositionsError::Malformed(
                        "positions not increasing within a document",
                    ));
                }
                values.push(if i == 0 { p } else { p - previous - 1 });
                previous = p;
            }
        }
        let chunks = values.len().div_ceil(BLOCK_LEN);
        let chunk_table = if chunks > 1 { chunks } else { 0 };
        let table_at = out.len();
        out.resize(table_at + 4 * chunk_table, 0);
        for (c, chunk) in values.chunks(BLOCK_LEN).enumerate() {
            codec.encode_freqs(chunk, out)?;
            if chunk_table > 0 {
                let end = (out.len() - block_start) as u32;
                out[table_at + 4 * c..table_at + 4 * c + 4].copy_from_slice(&end.to_le_bytes());
            }
        }
    }
    Ok(())
}

fn read_u32(bytes: &[u8], at: usize) -> Option<u32> {
    let b = bytes.get(at..at + 4)?;
    Some(u32::from_le_bytes(b.try_into().ok()?))
}

/// One term's positions region, ready to read.
#[derive(Clone, Copy)]
pub struct TermPositions<'a> {
    region: &'a [u8],
    doc_freq: u32,
}

impl<'a> TermPositions<'a> {
    /// The region of a term with `doc_freq` postings.
    pub fn new(region: &'a [u8], doc_freq: u32) -> TermPositions<'a> {
        TermPositions { region, doc_freq }
    }

    /// The region's bytes.
    pub fn bytes(&self) -> &'a [u8] {
        self.region
    }

    /// The term's posting blocks.
    pub fn blocks(&self) -> usize {
        (self.doc_freq as usize).div_ceil(BLOCK_LEN)
    }

    /// Appends every posting's positions to `out`, `freqs[i]` for posting `i` (the term's
    /// whole list of frequencies); the chunks are coded with `codec`.
    pub fn read_all(
        &self,
        codec: PositionsCodec,
        freqs: &[u32],
        out: &mut Vec<u32>,
    ) -> Result<(), PositionsError> {
        // Whole blocks at a time: every chunk decoded straight into `out`, then each
        // document's gaps turned into positions in one pass (a merge reads every position).
        let codec = codec.codec();
        for (b, block_freqs) in freqs.chunks(BLOCK_LEN).enumerate() {
            let block = self.block(b)?;
            let total: usize = block_freqs.iter().map(|&f| f as usize).sum();
            let chunks = total.div_ceil(BLOCK_LEN);
            let block_start = out.len();
            out.resize(block_start + total, 0);
            for c in 0..chunks {
                let (start, stop) = chunk_range(block, chunks, c)?;
                let at = block_start + c * BLOCK_LEN;
                let len = BLOCK_LEN.min(total - c * BLOCK_LEN);
                codec.decode_freqs(&block[start..stop], &mut out[at..at + len])?;
            }
            let mut at = block_start;
            for &freq in block_freqs {
                let Some(gaps) = (freq as usize).checked_sub(1) else {
                    return Err(PositionsError::Malformed(
                        "positions past the block's values",
                    ));
                };
                let mut position = out[at];
                for value in &mut out[at + 1..at + 1 + gaps] {
                    position = position
                        .checked_add(*value)
                        .and_then(|p| p.checked_add(1))
                        .ok_or(PositionsError::Malformed("position gaps out of range"))?;
                    *value = position;
                }
                at += 1 + gaps;
            }
        }
        Ok(())
    }

    /// The bytes of posting block `block`.
    pub fn block(&self, block: usize) -> Result<&'a [u8], PositionsError> {
        let (start, end) = self.block_range(block)?;
        Ok(&self.region[start..end])
    }

    /// Where posting block `block`'s bytes lie in the region.
    pub fn block_range(&self, block: usize) -> Result<(usize, usize), PositionsError> {
        let blocks = self.blocks();
        if block >= blocks {
            return Err(PositionsError::Malformed("block past the term's postings"));
        }
        if blocks == 1 {
            return Ok((0, self.region.len()));
        }
        let table = 4 * blocks;
        let bad = PositionsError::Malformed("block table out of order");
        let start = read_u32(self.region, 4 * block).ok_or(bad)? as usize;
        let end = if block + 1 < blocks {
            read_u32(self.region, 4 * (block + 1))
                .ok_or(PositionsError::Malformed("truncated block table"))? as usize
        } else {
            self.region.len()
        };
        if start < table || end < start || end > self.region.len() {
            return Err(PositionsError::Malformed("block table out of order"));
        }
        Ok((start, end))
    }
}

/// Decodes positions out of one posting block's bytes, a chunk at a time, keeping the last
/// chunk decoded (consecutive documents of a block usually share one).
///
/// A decoded chunk is turned into running sums at once, with SIMD (each value plus one, so
/// that a gap less one counts as the gap and a document's first value as itself plus one): a
/// document's positions are then its sums less the sum before it, a subtraction that
/// vectorises, where summing its gaps one at a time is a chain of dependent adds. A chunk
/// whose sums would pass `u32::MAX` (documents of billions of tokens, or a damaged chunk) is
/// kept as stored and summed one value at a time, with every position checked.
pub struct BlockPositionsReader {
    chunk: Box<[u32; BLOCK_LEN]>,
    /// The decoded chunk's index and number of values, when one is decoded.
    decoded: Option<(usize, usize)>,
    /// Whether `chunk` holds running sums (else the values as stored).
    summed: bool,
    isa: Isa,
}

impl Default for BlockPositionsReader {
    fn default() -> Self {
        BlockPositionsReader {
            chunk: Box::new([0; BLOCK_LEN]),
            decoded: None,
            summed: false,
            isa: Isa::detect(),
        }
    }
}

impl BlockPositionsReader {
    /// Forgets the decoded chunk (the next read is of another block).
    pub fn reset(&mut self) {
        self.decoded = None;
    }

    /// Appends to `out` the `freq` positions of the document whose values start at value
    /// `first` of the block `bytes`, which holds `total` values (the block's frequencies'
    /// sum) in chunks coded with `codec`.
    #[inline]
    pub fn read(
        &mut self,
        codec: PositionsCodec,
        bytes: &[u8],
        total: usize,
        first: usize,
        freq: usize,
        out: &mut Vec<u32>,
    ) -> Result<(), PositionsError> {
        // Most documents lie inside one chunk, usually the one decoded for the document
        // before: their positions are their sums less the sum before them, with nothing to
        // check (sums increase, each below `u32::MAX`).
        if let Some((range, base)) = self.sums_of(codec, bytes, total, first, freq)? {
            out.extend(self.chunk[range].iter().map(|&sum| sum - base));
            return Ok(());
        }
        self.read_decoding(codec, bytes, total, first, freq, out)
    }

    /// The document of [`Self::read`] as running sums, where it lies within one chunk: its
    /// positions are `sums[i] - base` for `sums` the values of [`Self::sums`] over the range
    /// returned with `base`, read in place. Decodes the document's chunk if it is not the one
    /// decoded. `None` for a document that spans chunks, or a chunk kept as stored (whose sums
    /// would pass `u32::MAX`): read it with [`Self::read`].
    #[inline]
    pub fn sums_of(
        &mut self,
        codec: PositionsCodec,
        bytes: &[u8],
        total: usize,
        first: usize,
        freq: usize,
    ) -> Result<Option<(Range<usize>, u32)>, PositionsError> {
        if first + freq > total || freq == 0 {
            return Err(PositionsError::Malformed(
                "positions past the block's values",
            ));
        }
        let c = first / BLOCK_LEN;
        let from = first % BLOCK_LEN;
        if from + freq > BLOCK_LEN {
            return Ok(None);
        }
        if self.decoded.map(|(d, _)| d) != Some(c) {
            self.decode_chunk(codec, bytes, total, c)?;
        }
        if !self.summed {
            return Ok(None);
        }
        let base = from.checked_sub(1).map_or(0, |p| self.chunk[p]) + 1;
        Ok(Some((from..from + freq, base)))
    }

    /// The decoded chunk's running sums over `range`, a range [`Self::sums_of`] returned
    /// since the reader last decoded.
    #[inline]
    pub fn sums(&self, range: Range<usize>) -> &[u32] {
        &self.chunk[range]
    }

    /// Decodes chunk `c` of the block `bytes` of `total` values, summing it where it can.
    fn decode_chunk(
        &mut self,
        codec: PositionsCodec,
        bytes: &[u8],
        total: usize,
        c: usize,
    ) -> Result<(), PositionsError> {
        let len = BLOCK_LEN.min(total - c * BLOCK_LEN);
        let (start, stop) = chunk_range(bytes, total.div_ceil(BLOCK_LEN), c)?;
        // Forgotten first: a chunk that fails to decode is not the one decoded.
        self.decoded = None;
        codec
            .codec()
            .decode_freqs(&bytes[start..stop], &mut self.chunk[..len])?;
        self.decoded = Some((c, len));
        self.summed = sum_chunk(&mut self.chunk[..len], self.isa);
        Ok(())
    }

    /// [`Self::read`] for a document that spans chunks, or whose chunk is kept as stored.
    #[inline(never)]
    fn read_decoding(
        &mut self,
        codec: PositionsCodec,
        bytes: &[u8],
        total: usize,
        first: usize,
        freq: usize,
        out: &mut Vec<u32>,
    ) -> Result<(), PositionsError> {
        if first + freq > total || freq == 0 {
            return Err(PositionsError::Malformed(
                "positions past the block's values",
            ));
        }
        out.reserve(freq);
        // The last position written, once one is (a document may span chunks).
        let mut last: Option<u64> = None;
        let mut at = first;
        let end = first + freq;
        while at < end {
            let c = at / BLOCK_LEN;
            if self.decoded.map(|(d, _)| d) != Some(c) {
                self.decode_chunk(codec, bytes, total, c)?;
            }
            let from = at % BLOCK_LEN;
            let run = (end - at).min(BLOCK_LEN - from);
            let values = &self.chunk[from..from + run];
            last = Some(if self.summed {
                // A document's first position is its value: its sum less the sum before it,
                // less one. Later ones add each gap to the last, or, past a chunk's start,
                // to the last position of the chunk before.
                let base = match last {
                    None => u64::from(from.checked_sub(1).map_or(0, |p| self.chunk[p])) + 1,
                    Some(last) => 0u64.wrapping_sub(last),
                };
                let top = u64::from(values[run - 1]).wrapping_sub(base);
                if top > u64::from(u32::MAX) {
                    return Err(PositionsError::Malformed("position gaps out of range"));
                }
                let base = base as u32;
                out.extend(values.iter().map(|&sum| sum.wrapping_sub(base)));
                top
            } else {
                add_gaps(values, last, out)?
            });
            at += run;
        }
        Ok(())
    }
}

/// Turns a decoded chunk into running sums of its values plus one, in place, and says so;
/// leaves it as it is when the sums would pass `u32::MAX`.
fn sum_chunk(values: &mut [u32], isa: Isa) -> bool {
    apcache_codec::kernels::prefix_sum_of_successors(values, isa)
}

/// Appends the positions of stored `values` to `out`, one at a time: the first is a document's
/// first position when `last` is `None`, else a gap less one from `last`. Returns the last
/// position.
fn add_gaps(values: &[u32], last: Option<u64>, out: &mut Vec<u32>) -> Result<u64, PositionsError> {
    let (mut position, gaps) = match last {
        Some(last) => (last, values),
        None => (u64::from(values[0]), &values[1..]),
    };
    if last.is_none() {
        out.push(values[0]);
    }
    for &gap in gaps {
        position += u64::from(gap) + 1;
        if position > u64::from(u32::MAX) {
            return Err(PositionsError::Malformed("position gaps out of range"));
        }
        out.push(position as u32);
    }
    Ok(position)
}

/// The byte range of chunk `c` of a block of `chunks` chunks.
fn chunk_range(bytes: &[u8], chunks: usize, c: usize) -> Result<(usize, usize), PositionsError> {
    if chunks == 1 {
        return Ok((0, bytes.len()));
    }
    let table = 4 * chunks;
    let bad = || PositionsError::Malformed("chunk table out of order");
    let start = if c == 0 {
        table
    } else {
        read_u32(bytes, 4 * (c - 1)).ok_or_else(bad)? as usize
    };
    let end = read_u32(bytes, 4 * c).ok_or_else(bad)? as usize;
    if start < table || end < start || end > bytes.len() {
        return Err(bad());
    }
    Ok((start, end))
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    const CODECS: [PositionsCodec; 2] =
        [PositionsCodec::PforDelta, PositionsCodec::BitpackDeltaSimd];

    /// Every posting's positions read back at once.
    fn read_all(codec: PositionsCodec, bytes: &[u8], freqs: &[u32]) -> Vec<u32> {
        let mut out = Vec::new();
        TermPositions::new(bytes, freqs.len() as u32)
            .read_all(codec, freqs, &mut out)
            .expect("read");
        out
    }

    /// Every posting's positions read back one document at a time, as phrase queries do;
    /// with `via_sums`, every other document as running sums where the reader gives them.
    fn read_each(codec: PositionsCodec, bytes: &[u8], freqs: &[u32], via_sums: bool) -> Vec<u32> {
        let term = TermPositions::new(bytes, freqs.len() as u32);
        let mut reader = BlockPositionsReader::default();
        let mut out = Vec::new();
        for (b, block_freqs) in freqs.chunks(BLOCK_LEN).enumerate() {
            reader.reset();
            let block = term.block(b).expect("block");
            let total: usize = block_freqs.iter().map(|&f| f as usize).sum();
            let mut first = 0;
            for (d, &f) in block_freqs.iter().enumerate() {
                let f = f as usize;
                if via_sums && d % 2 == 1 {
                    let sums = reader.sums_of(codec, block, total, first, f).expect("sums");
                    if let Some((range, base)) = sums {
                        out.extend(reader.sums(range).iter().map(|&sum| sum - base));
                        first += f;
                        continue;
                    }
                }
                reader
                    .read(codec, block, total, first, f, &mut out)
                    .expect("read");
                first += f;
            }
        }
        out
    }

    /// Documents of up to 40 positions; some near `u32::MAX`, whose chunks' running sums pass
    /// it (the reader's value-at-a-time path).
    fn postings() -> impl Strategy<Value = (Vec<u32>, Vec<u32>)> {
        let doc = (
            prop::collection::btree_set(0u32..5_000, 1..40),
            prop::bool::weighted(0.02),
        )
            .prop_map(|(set, high)| {
                let base = if high { u32::MAX - 5_000 } else { 0 };
                set.into_iter().map(|p| p + base).collect::<Vec<u32>>()
            });
        prop::collection::vec(doc, 1..700).prop_map(|docs| {
            let freqs = docs.iter().map(|p| p.len() as u32).collect();
            let positions = docs.into_iter().flatten().collect();
            (freqs, positions)
        })
    }

    proptest! {
        #[test]
        fn positions_round_trip((freqs, positions) in postings()) {
            for codec in CODECS {
                let mut bytes = vec![7u8; 3]; // a region need not start the buffer
                encode_term_positions(codec, &freqs, &positions, &mut bytes).expect("encode");
                prop_assert_eq!(&read_all(codec, &bytes[3..], &freqs), &positions);
                prop_assert_eq!(&read_each(codec, &bytes[3..], &freqs, false), &positions);
                prop_assert_eq!(&read_each(codec, &bytes[3..], &freqs, true), &positions);
            }
        }

        #[test]
        fn damaged_regions_never_panic((freqs, positions) in postings(), flips in prop::collection::vec((any::<usize>(), any::<u8>()), 1..8), bitpack in any::<bool>()) {
            let codec = CODECS[usize::from(bitpack)];
            let mut bytes = Vec::new();
            encode_term_positions(codec, &freqs, &positions, &mut bytes).expect("encode");
            for (at, value) in flips {
                let len = bytes.len();
                bytes[at % len] ^= value | 1;
            }
            let term = TermPositions::new(&bytes, freqs.len() as u32);
            let mut reader = BlockPositionsReader::default();
            let mut out = Vec::new();
            for (b, block_freqs) in freqs.chunks(BLOCK_LEN).enumerate() {
                reader.reset();
                let Ok(block) = term.block(b) else { continue };
                let total: usize = block_freqs.iter().map(|&f| f as usize).sum();
                let mut first = 0;
                for &f in block_freqs {
                    let _ = reader.read(codec, block, total, first, f as usize, &mut out);
                    let _ = reader.sums_of(codec, block, total, first, f as usize);
                    first += f as usize;
                }
            }
        }
    }

    #[test]
    fn a_single_short_block_has_no_tables() {
        let mut bytes = Vec::new();
        let codec = PositionsCodec::PforDelta;
        encode_term_positions(codec, &[2, 1], &[3, 9, 0], &mut bytes).expect("encode");
        // Values 3, 5 (the gap 6, less one), 0: one pfor-delta block at 3 bits, no table.
        let mut chunk = Vec::new();
        codec.codec().encode_freqs(&[3, 5, 0], &mut chunk).unwrap();
        assert_eq!(bytes, chunk);
    }

    #[test]
    fn bad_input_is_refused() {
        let mut bytes = Vec::new();
        for codec in CODECS {
            assert!(encode_term_positions(codec, &[2], &[3], &mut bytes).is_err());
            assert!(encode_term_positions(codec, &[2], &[3, 3], &mut bytes).is_err());
        }
    }
}
