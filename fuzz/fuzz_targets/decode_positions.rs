//! Feeds arbitrary bytes to the positions reader as a term's positions region, with
//! frequencies taken from the input: every read returns positions or a typed error, never
//! panics or reads out of bounds, and what it returns is increasing within a document. A
//! region encoded from the same frequencies and its own positions reads back exactly.
#![no_main]

use apcache_codec::BLOCK_LEN;
use apcache_index::format::{
    encode_term_positions, BlockPositionsReader, PositionsCodec, TermPositions,
};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Some((&header, rest)) = data.split_first() else { return };
    // The header's low bit picks the chunks' codec.
    let codec = if header & 1 == 0 {
        PositionsCodec::PforDelta
    } else {
        PositionsCodec::BitpackDeltaSimd
    };
    // The first bytes are frequencies (1 to 16 each), up to 600 postings, the rest the region.
    let postings = (usize::from(header >> 3) * 19 + rest.len() / 7) % 600 + 1;
    let (freq_bytes, region) = rest.split_at(postings.min(rest.len()));
    let freqs: Vec<u32> = freq_bytes.iter().map(|&b| u32::from(b % 16) + 1).collect();
    if freqs.is_empty() {
        return;
    }
    let term = TermPositions::new(region, freqs.len() as u32);
    let mut reader = BlockPositionsReader::default();
    let mut out = Vec::new();
    for (b, block_freqs) in freqs.chunks(BLOCK_LEN).enumerate() {
        reader.reset();
        let Ok(block) = term.block(b) else { continue };
        let total: usize = block_freqs.iter().map(|&f| f as usize).sum();
        let mut first = 0;
        for &f in block_freqs {
            out.clear();
            if reader.read(codec, block, total, first, f as usize, &mut out).is_ok() {
                assert_eq!(out.len(), f as usize);
                assert!(out.windows(2).all(|w| w[0] < w[1]), "{out:?}");
            }
            first += f as usize;
        }
    }
    // A sound region of these frequencies, from positions the input picks.
    let mut positions = Vec::new();
    let mut bytes = region.iter().copied().cycle();
    for &f in &freqs {
        let mut at = 0u32;
        for _ in 0..f {
            at += u32::from(bytes.next().unwrap_or(1)) + 1;
            positions.push(at);
        }
    }
    let mut encoded = Vec::new();
    encode_term_positions(codec, &freqs, &positions, &mut encoded).expect("sound input");
    let mut read = Vec::new();
    TermPositions::new(&encoded, freqs.len() as u32)
        .read_all(codec, &freqs, &mut read)
        .expect("sound read");
    assert_eq!(read, positions);
});
