//! The dense form of a DID block: the block's documents as a bitset.
//!
//! A block of a list that holds most documents of its stretch (a frequent word) packs its d-gaps
//! at two to five bits each, yet the same DIDs as a bitset take one bit per document of the
//! stretch. The bitset is also the form a union count wants: it ORs a block into its own bitset
//! a word at a time instead of decoding 256 DIDs and setting their bits one by one
//! ([`dense_words`]), and decoding it back to DIDs compresses a word's bit offsets at a time
//! with AVX-512 VBMI2.
//!
//! Layout, after the header byte [`DENSE_HEADER`]:
//!
//! ```text
//! words u8 (1..=128) | word u64 LE × words
//! ```
//!
//! Bit `k` of the bitset (bit `k % 64` of word `k / 64`) is set when the block holds DID
//! `base + k`. The bits set are exactly the block's `n` DIDs, so they increase strictly and
//! none is below the base; the last word is not zero.
//!
//! The encoder takes this form where it costs at most one bit per value more than plain packing
//! of the gaps would (Lucene 10.1 chose the same rule for its dense blocks): the bitset's bytes
//! at most those of plain packing one bit wider.

use crate::bitpack::{bit_width, horizontal};
use crate::error::take;
use crate::{CodecError, Isa};

/// Header byte of a dense block: mode 0 (plain) with a bit width no plain block can have.
pub(crate) const DENSE_HEADER: u8 = 0x3F;

/// Most words a dense block may hold: a bitset any larger costs more than 32 bits per value of
/// a full block, which plain packing never does.
const MAX_WORDS: usize = 128;

/// The number of bitset words `docs` need as a dense block over `base`, if they can take that
/// form (strictly increasing, none below `base`) and it costs at most one bit per value more
/// than plain packing of their gaps (`gaps`, `gaps[0]` the first DID's distance from `base`).
pub(crate) fn dense_words_for(base: u32, docs: &[u32], gaps: &[u32]) -> Option<usize> {
    let (&first, &last) = (docs.first()?, docs.last()?);
    if first < base || gaps.iter().skip(1).any(|&gap| gap == 0) {
        return None;
    }
    // Strictly increasing from the first: no gap wrapped (their sum is the span).
    let span: u64 = gaps.iter().map(|&g| u64::from(g)).sum::<u64>() + 1;
    if span != u64::from(last.checked_sub(base)?) + 1 {
        return None;
    }
    let words = span.div_ceil(64) as usize;
    if words > MAX_WORDS {
        return None;
    }
    let b = gaps.iter().map(|&g| bit_width(g)).max().unwrap_or(0);
    let plain_one_wider = 1 + horizontal::packed_len(docs.len(), (b + 1).min(32));
    (2 + 8 * words <= plain_one_wider).then_some(words)
}

/// Appends `docs` (which [`dense_words_for`] accepted with `words`) as a dense block.
pub(crate) fn encode_dense(base: u32, docs: &[u32], words: usize, out: &mut Vec<u8>) {
    let mut bits = [0u64; MAX_WORDS];
    for &doc in docs {
        let k = (doc - base) as usize;
        bits[k / 64] |= 1 << (k % 64);
    }
    out.push(DENSE_HEADER);
    out.push(words as u8);
    for word in &bits[..words] {
        out.extend_from_slice(&word.to_le_bytes());
    }
}

/// The bitset bytes of a dense block starting at `input` (after its header byte), checked to
/// hold exactly `n` set bits with a last word that is not zero.
pub(crate) fn dense_words(input: &[u8], n: usize) -> Result<&[u8], CodecError> {
    let words = usize::from(*take(input, 1)?.first().expect("one byte"));
    if words == 0 || words > MAX_WORDS {
        return Err(CodecError::Corrupt("dense block word count out of range"));
    }
    let bytes = take(&input[1..], 8 * words)?;
    let ones = crate::popcount::popcount_bytes(bytes);
    if ones != n as u64 || bytes[bytes.len() - 8..] == [0; 8] {
        return Err(CodecError::Corrupt(
            "dense block bits disagree with its length",
        ));
    }
    Ok(bytes)
}

/// Writes the DIDs of the bitset `bytes` (holding `out.len()` set bits, see [`dense_words`])
/// to `out`, bit `k` as `base + k`.
pub(crate) fn decode_dense(bytes: &[u8], base: u32, out: &mut [u32], isa: Isa) {
    #[cfg(target_arch = "x86_64")]
    if isa >= Isa::Avx512 && std::arch::is_x86_feature_detected!("avx512vbmi2") {
        // SAFETY: AVX-512 F, BW and VBMI2 and `popcnt` were detected (the last by the Isa); `bytes` holds exactly `out.len()`
        // set bits.
        unsafe { avx512::decode(bytes, base, out) };
        return;
    }
    let _ = isa;
    let mut k = 0;
    for (w, word) in bytes.chunks_exact(8).enumerate() {
        let mut bits = u64::from_le_bytes(word.try_into().expect("8 bytes"));
        let at = base.wrapping_add(64 * w as u32);
        while bits != 0 {
            out[k] = at.wrapping_add(bits.trailing_zeros());
            k += 1;
            bits &= bits - 1;
        }
    }
}

#[cfg(target_arch = "x86_64")]
mod avx512 {
    use std::arch::x86_64::*;

    /// A word at a time: one byte compress gathers the offsets (0 to 63) of its set bits at
    /// the front of a register, and each sixteen of them widen to DIDs and go out under a
    /// mask of their count (a masked store, not a compressing one, which is slow on some
    /// CPUs).
    ///
    /// The first two quarters (sixteen offsets each) are stored for every word, the other
    /// two only for a word of more than 32 documents, each under the mask of its offsets (an
    /// empty one for a quarter past the word's count). The words of a block are about as
    /// dense as each other, so that one branch is predicted, where a branch per quarter used
    /// was not: part 0's 7,214 dense blocks of DIDs decode in 72-76 ns each instead of 130.
    /// (Storing as many quarters as the block's fullest word needs, with no branch at all, took
    /// 95 ns: most blocks have a word past 32.)
    ///
    /// # Safety
    /// AVX-512 F, BW and VBMI2 and `popcnt` must be available; `bytes` must hold exactly
    /// `out.len()` set bits in whole 8-byte words.
    #[target_feature(enable = "avx512f,avx512bw,avx512vbmi2,popcnt")]
    pub(super) unsafe fn decode(bytes: &[u8], base: u32, out: &mut [u32]) {
        let mut offsets = [0u8; 64];
        for (i, offset) in offsets.iter_mut().enumerate() {
            *offset = i as u8;
        }
        // SAFETY: 64 readable bytes.
        let offsets = unsafe { _mm512_loadu_si512(offsets.as_ptr() as *const _) };
        let mut k = 0usize;
        for (w, word) in bytes.chunks_exact(8).enumerate() {
            let mask = u64::from_le_bytes(word.try_into().expect("8 bytes"));
            let count = mask.count_ones() as usize;
            let packed = _mm512_maskz_compress_epi8(mask, offsets);
            let at = _mm512_set1_epi32(base.wrapping_add(64 * w as u32) as i32);
            let quarters = [
                _mm512_castsi512_si128(packed),
                _mm512_extracti32x4_epi32::<1>(packed),
                _mm512_extracti32x4_epi32::<2>(packed),
                _mm512_extracti32x4_epi32::<3>(packed),
            ];
            // The word's offsets: all 64 where it is full.
            let keep = u64::MAX.checked_shr(64 - count as u32).unwrap_or(0);
            let used = if count > 32 { 4 } else { 2 };
            for (q, quarter) in quarters.into_iter().enumerate().take(used) {
                let ids = _mm512_add_epi32(_mm512_cvtepu8_epi32(quarter), at);
                let lanes = (keep >> (16 * q)) as u16;
                // SAFETY: the caller's contract: `out` has room for every set bit; the store
                // writes only the lanes of this quarter's offsets below the word's count, from
                // `k + 16 q`, below the total, and a store with no lane writes nothing.
                unsafe {
                    _mm512_mask_storeu_epi32(
                        out.as_mut_ptr().wrapping_add(k + 16 * q) as *mut _,
                        lanes,
                        ids,
                    )
                };
            }
            k += count;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::delta::to_gaps;
    use proptest::prelude::*;

    fn dense_docs() -> impl Strategy<Value = (u32, Vec<u32>)> {
        (
            0u32..1_000_000,
            proptest::collection::btree_set(0u32..3000, 1..=256),
        )
            .prop_map(|(base, offsets)| {
                let first = *offsets.iter().next().expect("one");
                (
                    base,
                    offsets.into_iter().map(|o| base + o - first).collect(),
                )
            })
    }

    proptest! {
        #[test]
        fn every_isa_decodes_what_was_encoded((base, docs) in dense_docs()) {
            let mut gaps = vec![0u32; docs.len()];
            to_gaps(base, &docs, &mut gaps);
            let words = (docs[docs.len() - 1] - base) as usize / 64 + 1;
            let mut out = Vec::new();
            encode_dense(base, &docs, words, &mut out);
            prop_assert_eq!(out.len(), 2 + 8 * words);
            let bytes = dense_words(&out[1..], docs.len()).unwrap();
            for isa in Isa::all_supported() {
                let mut decoded = vec![0u32; docs.len()];
                decode_dense(bytes, base, &mut decoded, isa);
                prop_assert_eq!(&decoded, &docs, "{:?}", isa);
            }
            prop_assert!(dense_words(&out[1..], docs.len() + 1).is_err());
        }
    }

    #[test]
    fn dense_only_where_it_costs_at_most_a_bit_more_than_plain() {
        let form = |docs: &[u32]| {
            let mut gaps = vec![0u32; docs.len()];
            to_gaps(docs[0], docs, &mut gaps);
            dense_words_for(docs[0], docs, &gaps)
        };
        // Every other document: 2-bit gaps, 8 words of bits (66 bytes against 97 at 3 bits).
        let every_other: Vec<u32> = (0..256).map(|i| 100 + 2 * i).collect();
        assert_eq!(form(&every_other), Some(8));
        // Every tenth: 4-bit gaps, 40 words (322 bytes against 161).
        let sparse: Vec<u32> = (0..256).map(|i| 100 + 10 * i).collect();
        assert_eq!(form(&sparse), None);
        // A repeated DID or one below the base cannot be a bitset.
        assert_eq!(form(&[5, 5, 6]), None);
        let mut gaps = [0u32; 2];
        to_gaps(10, &[4, 20], &mut gaps);
        assert_eq!(dense_words_for(10, &[4, 20], &gaps), None);
        // One posting: its header alone is smaller.
        assert_eq!(form(&[7]), None);
    }
}
