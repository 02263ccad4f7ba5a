//! The word-rule classes of 64 ASCII bytes at a time, as one bit per byte.
//!
//! The ASCII word scanner ([`super::ascii_words`]) needs to know, for every byte, whether it is
//! a letter, a digit, an underscore, a capital, or one of the separators that can stay inside a
//! word. Asking byte by byte costs a branch per byte, and the branch at the end of every word
//! is one the CPU cannot predict. Here a block's classes come out as bit masks, a few vector
//! compares per 64 bytes with AVX-512 BW (two halves of 32 with AVX2), so that the scanner
//! finds words with `trailing_zeros` instead of stepping through them. The scalar form is the
//! portable fallback, and all three are tested against each other.

use apcache_codec::Isa;

/// Bytes per block.
pub(super) const BLOCK: usize = 64;

/// One bit per byte (bit `i` for byte `i`) for each class the word rules use, in masks of type
/// `M`: `u64` for a block, `u32` for the AVX2 path's halves.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(super) struct Classes<M> {
    /// `A-Z` and `a-z` (ALetter).
    pub letters: M,
    /// `0-9` (Numeric).
    pub digits: M,
    /// `_` (ExtendNumLet).
    pub underscores: M,
    /// `A-Z`: a word without one is already lowercase.
    pub capitals: M,
    /// `:`, `.` and `'`, which stay inside a word between two letters (WB6, WB7).
    pub letter_joiners: M,
    /// `,`, `;`, `.` and `'`, which stay inside a word between two digits (WB11, WB12).
    pub digit_joiners: M,
}

/// The classes of a block of [`BLOCK`] bytes.
pub(super) type BlockClasses = Classes<u64>;

impl<M: Copy + std::ops::BitOr<Output = M>> Classes<M> {
    /// The classes from a SIMD path's two tests of its bytes: `in_range(folded, first, span)`,
    /// the bytes from `first` to `first + span` (of the bytes with bit 5 set where `folded`,
    /// which folds `A-Z` onto `a-z` and moves no other byte into that range), and
    /// `equal(byte)`.
    #[cfg(target_arch = "x86_64")]
    #[inline(always)]
    fn from_tests(in_range: impl Fn(bool, u8, u8) -> M, equal: impl Fn(u8) -> M) -> Classes<M> {
        let (dot, apostrophe) = (equal(b'.'), equal(b'\''));
        Classes {
            letters: in_range(true, b'a', 25),
            digits: in_range(false, b'0', 9),
            underscores: equal(b'_'),
            capitals: in_range(false, b'A', 25),
            letter_joiners: equal(b':') | dot | apostrophe,
            digit_joiners: equal(b',') | equal(b';') | dot | apostrophe,
        }
    }
}

/// A way of classifying a block, chosen once per text.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Classifier {
    Scalar,
    #[cfg(target_arch = "x86_64")]
    Avx2,
    #[cfg(target_arch = "x86_64")]
    Avx512,
}

impl Classifier {
    /// The fastest classifier `isa` allows.
    pub(super) fn for_isa(isa: Isa) -> Classifier {
        #[cfg(target_arch = "x86_64")]
        {
            // `Isa` never names a level the CPU lacks; AVX-512 BW is part of its AVX-512 level.
            if isa >= Isa::Avx512 {
                return Classifier::Avx512;
            }
            if isa >= Isa::Avx2 {
                return Classifier::Avx2;
            }
        }
        let _ = isa;
        Classifier::Scalar
    }

    /// The classes of `block`'s bytes. Bytes outside ASCII belong to no class.
    #[inline]
    pub(super) fn classify(self, block: &[u8; BLOCK]) -> BlockClasses {
        match self {
            Classifier::Scalar => classify_scalar(block),
            // SAFETY: the CPU has the instructions: `for_isa` picks these only at an `Isa`
            // level the running CPU supports.
            #[cfg(target_arch = "x86_64")]
            Classifier::Avx2 => unsafe { x86::classify_avx2(block) },
            // SAFETY: as above: only at an `Isa` level the running CPU supports.
            #[cfg(target_arch = "x86_64")]
            Classifier::Avx512 => unsafe { x86::classify_avx512(block) },
        }
    }
}

/// Class bits of one byte, in [`CLASS_OF_BYTE`].
const LETTER: u8 = 1;
const DIGIT: u8 = 2;
const UNDERSCORE: u8 = 4;
const CAPITAL: u8 = 8;
const LETTER_JOINER: u8 = 16;
const DIGIT_JOINER: u8 = 32;

static CLASS_OF_BYTE: [u8; 256] = {
    let mut table = [0u8; 256];
    let mut byte = 0;
    while byte < 256 {
        let b = byte as u8;
        let mut class = 0;
        if b.is_ascii_alphabetic() {
            class |= LETTER;
        }
        if b.is_ascii_uppercase() {
            class |= CAPITAL;
        }
        if b.is_ascii_digit() {
            class |= DIGIT;
        }
        if b == b'_' {
            class |= UNDERSCORE;
        }
        if matches!(b, b':' | b'.' | b'\'') {
            class |= LETTER_JOINER;
        }
        if matches!(b, b',' | b';' | b'.' | b'\'') {
            class |= DIGIT_JOINER;
        }
        table[byte] = class;
        byte += 1;
    }
    table
};

fn classify_scalar(block: &[u8; BLOCK]) -> BlockClasses {
    let mut classes = BlockClasses::default();
    for (i, &byte) in block.iter().enumerate() {
        let class = CLASS_OF_BYTE[usize::from(byte)];
        let bit = |flag: u8| u64::from(class & flag != 0) << i;
        classes.letters |= bit(LETTER);
        classes.digits |= bit(DIGIT);
        classes.underscores |= bit(UNDERSCORE);
        classes.capitals |= bit(CAPITAL);
        classes.letter_joiners |= bit(LETTER_JOINER);
        classes.digit_joiners |= bit(DIGIT_JOINER);
    }
    classes
}

#[cfg(target_arch = "x86_64")]
mod x86 {
    use std::arch::x86_64::*;

    use super::{BlockClasses, Classes, BLOCK};

    /// # Safety
    /// The CPU has AVX-512 F and BW.
    #[target_feature(enable = "avx512f,avx512bw")]
    pub(super) unsafe fn classify_avx512(block: &[u8; BLOCK]) -> BlockClasses {
        // SAFETY: `block` is 64 readable bytes.
        let bytes = unsafe { _mm512_loadu_si512(block.as_ptr().cast()) };
        // Setting bit 5 folds `A-Z` onto `a-z`.
        let folded = _mm512_or_si512(bytes, _mm512_set1_epi8(0x20));
        // `first <= byte <= first + span`, unsigned, as one subtraction and one compare.
        let in_range = |fold: bool, first: u8, span: u8| {
            let tested = if fold { folded } else { bytes };
            let offset = _mm512_sub_epi8(tested, _mm512_set1_epi8(first as i8));
            _mm512_cmple_epu8_mask(offset, _mm512_set1_epi8(span as i8))
        };
        let equal = |byte: u8| _mm512_cmpeq_epi8_mask(bytes, _mm512_set1_epi8(byte as i8));
        BlockClasses::from_tests(in_range, equal)
    }

    /// # Safety
    /// The CPU has AVX2.
    #[target_feature(enable = "avx2")]
    pub(super) unsafe fn classify_avx2(block: &[u8; BLOCK]) -> BlockClasses {
        // SAFETY: the CPU has AVX2 (the caller's contract); each half is 32 readable bytes.
        let (low, high) = unsafe { (half(block.as_ptr()), half(block.as_ptr().add(32))) };
        BlockClasses {
            letters: join(low.letters, high.letters),
            digits: join(low.digits, high.digits),
            underscores: join(low.underscores, high.underscores),
            capitals: join(low.capitals, high.capitals),
            letter_joiners: join(low.letter_joiners, high.letter_joiners),
            digit_joiners: join(low.digit_joiners, high.digit_joiners),
        }
    }

    fn join(low: u32, high: u32) -> u64 {
        u64::from(low) | (u64::from(high) << 32)
    }

    /// # Safety
    /// The CPU has AVX2; `at` points to 32 readable bytes.
    #[target_feature(enable = "avx2")]
    unsafe fn half(at: *const u8) -> Classes<u32> {
        // SAFETY: `at` points to 32 readable bytes (the caller's contract).
        let bytes = unsafe { _mm256_loadu_si256(at.cast()) };
        let mask = |lanes: __m256i| _mm256_movemask_epi8(lanes) as u32;
        let folded = _mm256_or_si256(bytes, _mm256_set1_epi8(0x20));
        // `first <= byte <= first + span`, unsigned: the offset equals its minimum with `span`.
        let in_range = |fold: bool, first: u8, span: u8| {
            let tested = if fold { folded } else { bytes };
            let offset = _mm256_sub_epi8(tested, _mm256_set1_epi8(first as i8));
            let capped = _mm256_min_epu8(offset, _mm256_set1_epi8(span as i8));
            mask(_mm256_cmpeq_epi8(offset, capped))
        };
        let equal = |byte: u8| mask(_mm256_cmpeq_epi8(bytes, _mm256_set1_epi8(byte as i8)));
        Classes::from_tests(in_range, equal)
    }
}

#[cfg(test)]
pub(super) mod tests {
    use proptest::prelude::*;

    use super::*;

    /// Every classifier the running CPU can use.
    pub(in super::super) fn classifiers() -> Vec<Classifier> {
        let best = Classifier::for_isa(Isa::detect());
        let mut all = vec![Classifier::Scalar];
        #[cfg(target_arch = "x86_64")]
        {
            if matches!(best, Classifier::Avx2 | Classifier::Avx512) {
                all.push(Classifier::Avx2);
            }
            if best == Classifier::Avx512 {
                all.push(Classifier::Avx512);
            }
        }
        all
    }

    #[test]
    fn every_byte_value_is_classified_alike() {
        // Each byte value at each position, with the other lanes cycling through the rest.
        for shift in 0..=255u8 {
            let block: [u8; BLOCK] =
                std::array::from_fn(|i| (i as u8).wrapping_mul(4).wrapping_add(shift));
            let want = classify_scalar(&block);
            for classifier in classifiers() {
                assert_eq!(classifier.classify(&block), want, "{classifier:?}");
            }
        }
    }

    #[test]
    fn scalar_classes_are_the_word_rules() {
        let sample = b"aZ9_:.',;-\0\x80 ";
        let block: [u8; BLOCK] = std::array::from_fn(|i| sample[i % sample.len()]);
        let classes = classify_scalar(&block);
        for (i, &byte) in block.iter().enumerate() {
            let has = |mask: u64| mask >> i & 1 == 1;
            assert_eq!(has(classes.letters), byte.is_ascii_alphabetic());
            assert_eq!(has(classes.capitals), byte.is_ascii_uppercase());
            assert_eq!(has(classes.digits), byte.is_ascii_digit());
            assert_eq!(has(classes.underscores), byte == b'_');
            assert_eq!(has(classes.letter_joiners), b":.'".contains(&byte));
            assert_eq!(has(classes.digit_joiners), b",;.'".contains(&byte));
        }
    }

    proptest! {
        #[test]
        fn classifiers_agree_on_any_bytes(bytes in prop::array::uniform32(any::<u8>()), more in prop::array::uniform32(any::<u8>())) {
            let block: [u8; BLOCK] = std::array::from_fn(|i| if i < 32 { bytes[i] } else { more[i - 32] });
            let want = classify_scalar(&block);
            for classifier in classifiers() {
                prop_assert_eq!(classifier.classify(&block), want);
            }
        }
    }
}
