//! Counting the set bits of a bitset.

use crate::Isa;

/// The number of set bits in `words`.
///
/// Counts eight words per instruction with AVX-512 VPOPCNTDQ where the CPU has it, else one
/// word per `popcnt` instruction, else with portable code.
///
/// ```
/// assert_eq!(apcache_codec::popcount(&[0b1011, u64::MAX, 0]), 67);
/// ```
pub fn popcount(words: &[u64]) -> u64 {
    popcount_with_isa(words, Isa::detect())
}

/// [`popcount`] with at most `isa` (lowered to what this CPU supports): [`Isa::Avx512`] counts
/// with VPOPCNTDQ, [`Isa::Sse41`] and [`Isa::Avx2`] with the `popcnt` instruction where the CPU
/// has it, [`Isa::Scalar`] with portable code. For benchmarks and tests; every level counts
/// alike.
pub fn popcount_with_isa(words: &[u64], isa: Isa) -> u64 {
    #[cfg(target_arch = "x86_64")]
    {
        let isa = isa.supported();
        if isa >= Isa::Avx512 {
            // SAFETY: an Isa at Avx512 is only obtained after detecting its features.
            return unsafe { x86::popcount_avx512(words) };
        }
        if isa > Isa::Scalar && std::arch::is_x86_feature_detected!("popcnt") {
            // SAFETY: `popcnt` was detected.
            return unsafe { x86::popcount_popcnt(words) };
        }
    }
    let _ = isa;
    popcount_scalar(words)
}

/// The number of set bits in `bytes`: [`popcount`] of a bitset still in its stored bytes (the
/// count does not depend on their order, so unaligned little-endian words need no copy).
pub(crate) fn popcount_bytes(bytes: &[u8]) -> u64 {
    popcount_bytes_with_isa(bytes, Isa::detect())
}

/// [`popcount_bytes`] with at most `isa`, as [`popcount_with_isa`].
pub(crate) fn popcount_bytes_with_isa(bytes: &[u8], isa: Isa) -> u64 {
    #[cfg(target_arch = "x86_64")]
    if isa.supported() >= Isa::Avx512 {
        // SAFETY: an Isa at Avx512 is only obtained after detecting its features.
        return unsafe { x86::popcount_bytes_avx512(bytes) };
    }
    let _ = isa;
    let mut words = bytes.chunks_exact(8);
    let mut count: u64 = (&mut words)
        .map(|w| u64::from(u64::from_le_bytes(w.try_into().expect("8 bytes")).count_ones()))
        .sum();
    count += words
        .remainder()
        .iter()
        .map(|b| u64::from(b.count_ones()))
        .sum::<u64>();
    count
}

/// The portable count; the oracle of the others.
fn popcount_scalar(words: &[u64]) -> u64 {
    words.iter().map(|w| u64::from(w.count_ones())).sum()
}

#[cfg(target_arch = "x86_64")]
mod x86 {
    use std::arch::x86_64::*;

    /// One word per `popcnt` instruction.
    ///
    /// # Safety
    /// The CPU must support `popcnt`.
    #[target_feature(enable = "popcnt")]
    pub(super) unsafe fn popcount_popcnt(words: &[u64]) -> u64 {
        super::popcount_scalar(words)
    }

    /// Eight words per VPOPCNTQ, four registers of counts in flight; the last, shorter chunk
    /// through a masked load.
    ///
    /// # Safety
    /// The CPU must support the features of [`crate::Isa::Avx512`].
    #[target_feature(enable = "avx2,avx512f,avx512bw,avx512vbmi,avx512vpopcntdq")]
    pub(super) unsafe fn popcount_avx512(words: &[u64]) -> u64 {
        let mut sums = [_mm512_setzero_si512(); 4];
        let mut chunks = words.chunks_exact(32);
        for chunk in &mut chunks {
            for (k, sum) in sums.iter_mut().enumerate() {
                // SAFETY: `chunk` holds 32 words, so words `8k..8k + 8` (`k < 4`) are in it; an
                // unaligned load.
                let v = unsafe { _mm512_loadu_si512(chunk.as_ptr().add(8 * k) as *const _) };
                *sum = _mm512_add_epi64(*sum, _mm512_popcnt_epi64(v));
            }
        }
        let mut total = _mm512_add_epi64(
            _mm512_add_epi64(sums[0], sums[1]),
            _mm512_add_epi64(sums[2], sums[3]),
        );
        for rest in chunks.remainder().chunks(8) {
            let lanes = ((1u32 << rest.len()) - 1) as __mmask8;
            // SAFETY: the mask selects the `rest.len()` (at most 8) words of `rest`; masked-off
            // lanes are not read.
            let v = unsafe { _mm512_maskz_loadu_epi64(lanes, rest.as_ptr() as *const i64) };
            total = _mm512_add_epi64(total, _mm512_popcnt_epi64(v));
        }
        _mm512_reduce_add_epi64(total) as u64
    }

    /// Sixty-four bytes per VPOPCNTQ, the last, shorter chunk through a masked load.
    ///
    /// # Safety
    /// The CPU must support the features of [`crate::Isa::Avx512`].
    #[target_feature(enable = "avx2,avx512f,avx512bw,avx512vbmi,avx512vpopcntdq")]
    pub(super) unsafe fn popcount_bytes_avx512(bytes: &[u8]) -> u64 {
        let mut total = _mm512_setzero_si512();
        for chunk in bytes.chunks(64) {
            let lanes = u64::MAX >> (64 - chunk.len());
            // SAFETY: the mask selects the `chunk.len()` (1 to 64) bytes of `chunk`; masked-off
            // bytes are not read.
            let v = unsafe { _mm512_maskz_loadu_epi8(lanes, chunk.as_ptr() as *const i8) };
            total = _mm512_add_epi64(total, _mm512_popcnt_epi64(v));
        }
        _mm512_reduce_add_epi64(total) as u64
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn counts_every_length_at_every_level() {
        for len in 0..100usize {
            let words: Vec<u64> = (0..len as u64)
                .map(|i| i.wrapping_mul(0x9E37_79B9_7F4A_7C15) ^ (i << 60))
                .collect();
            let expected = popcount_scalar(&words);
            for isa in Isa::ALL {
                assert_eq!(popcount_with_isa(&words, isa), expected, "{isa:?} {len}");
            }
        }
        assert_eq!(popcount(&[u64::MAX; 1000]), 64_000);
    }

    proptest! {
        #[test]
        fn bytes_count_as_their_words(bytes in prop::collection::vec(any::<u8>(), 0..600), skip in 0usize..8) {
            let bytes = &bytes[skip.min(bytes.len())..];
            let expected: u64 = bytes.iter().map(|b| u64::from(b.count_ones())).sum();
            for isa in Isa::ALL {
                prop_assert_eq!(popcount_bytes_with_isa(bytes, isa), expected);
            }
        }

        #[test]
        fn every_level_counts_alike(words in prop::collection::vec(any::<u64>(), 0..300), skip in 0usize..8) {
            // Slices at any offset and length.
            let words = &words[skip.min(words.len())..];
            let expected = popcount_scalar(words);
            for isa in Isa::all_supported() {
                prop_assert_eq!(popcount_with_isa(words, isa), expected);
            }
        }
    }
}
