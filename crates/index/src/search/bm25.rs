//! BM25 as Lucene 9 computes it, to the bit.
//!
//! Lucene's `BM25Similarity` scores `idf · freq / (freq + k1 · (1 − b + b · dl / avgdl))`
//! (it dropped the constant `k1 + 1` factor in 8.0), with
//! `idf = ln(1 + (N − n + 0.5) / (n + 0.5))`, all in `f32` and in a particular order of
//! operations, and it stores each document's length lossily in one byte (`SmallFloat.intToByte4`:
//! exact up to 23, then 4 significant bits). [`Bm25`] follows the same operations so that, with
//! [`Norms::Lucene`], scores equal Lucene's exactly and rankings can be compared document for
//! document; [`Norms::Exact`] uses true lengths, and [`Scoring::Bm25Fixed`] is the original
//! study's variant without length normalisation (b = 0).

use crate::segment::DocLengths;
use serde::Serialize;

/// Which BM25.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Scoring {
    /// k1 = 1.2, b = 0.75.
    #[default]
    Bm25,
    /// k1 = 1.2, b = 0 (no length normalisation).
    Bm25Fixed,
}

/// How document lengths enter the score.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Norms {
    /// Lengths quantised to one byte as Lucene's norms are (scores match Lucene's).
    #[default]
    Lucene,
    /// True lengths.
    Exact,
}

/// Lucene's `SmallFloat.longToInt4`: 4 significant bits and a shift.
fn long_to_int4(i: u64) -> u32 {
    let bits = 64 - i.leading_zeros();
    if bits < 4 {
        i as u32
    } else {
        let shift = bits - 4;
        let mut encoded = ((i >> shift) as u32) & 0x07;
        encoded |= (shift + 1) << 3;
        encoded
    }
}

/// Lucene's `SmallFloat.int4ToLong`.
fn int4_to_long(i: u32) -> u64 {
    let bits = u64::from(i & 0x07);
    let shift = (i >> 3) as i32 - 1;
    if shift == -1 {
        bits
    } else {
        (bits | 0x08) << shift
    }
}

/// Values below this are stored exactly (`SmallFloat.NUM_FREE_VALUES`, 24).
const NUM_FREE_VALUES: u32 = 255 - 231;

/// Lucene's `SmallFloat.intToByte4`: the norm byte of a document length.
pub fn length_to_norm(length: u32) -> u8 {
    if length < NUM_FREE_VALUES {
        length as u8
    } else {
        (NUM_FREE_VALUES + long_to_int4(u64::from(length - NUM_FREE_VALUES))) as u8
    }
}

/// Lucene's `SmallFloat.byte4ToInt`: the length a norm byte stands for.
pub fn norm_to_length(norm: u8) -> u32 {
    let i = u32::from(norm);
    if i < NUM_FREE_VALUES {
        i
    } else {
        (u64::from(NUM_FREE_VALUES) + int4_to_long(i - NUM_FREE_VALUES)).min(i32::MAX as u64) as u32
    }
}

/// The collection statistics and parameters of a scorer.
#[derive(Debug, Clone)]
pub struct Bm25 {
    k1: f32,
    b: f32,
    avgdl: f32,
    norms: Norms,
    /// `1 / (k1 · (1 − b + b · len / avgdl))` per norm byte (Lucene's cache).
    norm_inverse: [f32; 256],
    doc_count: u64,
}

impl Bm25 {
    /// A scorer for a collection of `doc_count` documents (those with at least one token)
    /// holding `total_tokens` tokens.
    pub fn new(scoring: Scoring, norms: Norms, doc_count: u64, total_tokens: u64) -> Bm25 {
        let (k1, b) = match scoring {
            Scoring::Bm25 => (1.2f32, 0.75f32),
            Scoring::Bm25Fixed => (1.2f32, 0.0f32),
        };
        let avgdl = if doc_count == 0 {
            1.0
        } else {
            (total_tokens as f64 / doc_count as f64) as f32
        };
        let mut norm_inverse = [0f32; 256];
        for (i, slot) in norm_inverse.iter_mut().enumerate() {
            let length = norm_to_length(i as u8) as f32;
            *slot = 1f32 / (k1 * ((1f32 - b) + b * length / avgdl));
        }
        Bm25 {
            k1,
            b,
            avgdl,
            norms,
            norm_inverse,
            doc_count,
        }
    }

    /// The BM25 a segment's best postings are chosen with (see `SkipEntry::best_freq`): k1 1.2,
    /// b 0.75, Lucene norms, the statistics of the documents whose lengths are `lengths`.
    pub fn of_lengths(lengths: &[u32]) -> Bm25 {
        let doc_count = lengths.iter().filter(|&&l| l > 0).count() as u64;
        let total: u64 = lengths.iter().map(|&l| u64::from(l)).sum();
        Bm25::new(Scoring::Bm25, Norms::Lucene, doc_count, total)
    }

    /// Whether this scorer ranks postings as [`Bm25::of_lengths`] of the same collection
    /// does, so a block's best posting under one is its best under the other.
    pub fn same_ranking(&self, other: &Bm25) -> bool {
        self.k1 == other.k1
            && self.b == other.b
            && self.norms == other.norms
            && self.avgdl.to_bits() == other.avgdl.to_bits()
    }

    /// The quantity BM25 grows with for a fixed term: `freq / (k1 · (1 − b + b · len / avgdl))`,
    /// computed as [`Bm25::score`] computes it.
    #[inline]
    pub fn saturation_key(&self, freq: u32, length: u32) -> f32 {
        Bm25::key_of(freq, self.norm_inverse(length))
    }

    /// [`Bm25::saturation_key`] from the document's [`Bm25::norm_inverse`], for evaluators that
    /// score several terms of one document.
    #[inline]
    pub fn key_of(freq: u32, norm_inverse: f32) -> f32 {
        freq as f32 * norm_inverse
    }

    /// Lucene's IDF of a term in `doc_freq` documents (the term's weight).
    pub fn idf(&self, doc_freq: u64) -> f32 {
        // Lucene's document count is that of the term's own field, which holds every document
        // of the term. Keyword values and existence marks score with the default field's
        // statistics, whose count may be smaller: it is raised to the term's frequency, so
        // that no weight is negative (the pruned evaluators' bounds assume none is).
        let n = (self.doc_count as f64).max(doc_freq as f64);
        let df = doc_freq as f64;
        (1.0 + (n - df + 0.5) / (df + 0.5)).ln() as f32
    }

    /// `1 / (k1 · (1 − b + b · length / avgdl))` for a document of `length` tokens.
    #[inline]
    pub fn norm_inverse(&self, length: u32) -> f32 {
        match self.norms {
            Norms::Lucene => self.norm_inverse[length_to_norm(length) as usize],
            Norms::Exact => {
                1f32 / (self.k1 * ((1f32 - self.b) + self.b * length as f32 / self.avgdl))
            }
        }
    }

    /// [`Bm25::norm_inverse`] of the shortest length of norm byte `norm` (under Lucene's norms,
    /// of every length of that byte).
    #[inline]
    pub fn norm_inverse_of_norm(&self, norm: u8) -> f32 {
        match self.norms {
            Norms::Lucene => self.norm_inverse[usize::from(norm)],
            Norms::Exact => self.norm_inverse(norm_to_length(norm)),
        }
    }

    /// [`Bm25::norm_inverse`] of global DID `doc`, from its norm byte where the norms are
    /// Lucene's (one table load, no length conversion).
    #[inline]
    pub fn norm_inverse_of(&self, lengths: &DocLengths<'_>, doc: u32) -> f32 {
        match self.norms {
            Norms::Lucene => self.norm_inverse[usize::from(lengths.norm_byte(doc))],
            Norms::Exact => self.norm_inverse(lengths.of(doc)),
        }
    }

    /// The table of [`Bm25::norm_inverse`] by norm byte, when the norms are Lucene's.
    pub fn norm_table(&self) -> Option<&[f32; 256]> {
        match self.norms {
            Norms::Lucene => Some(&self.norm_inverse),
            Norms::Exact => None,
        }
    }

    /// The score of a posting with frequency `freq` in a document of `length` tokens, for a
    /// term of weight `weight` ([`Bm25::idf`]).
    #[inline]
    pub fn score(&self, weight: f32, freq: u32, length: u32) -> f32 {
        self.score_of_key(weight, self.saturation_key(freq, length))
    }

    /// [`Bm25::score`] for a document whose length normalisation is `inverse`
    /// ([`Bm25::norm_inverse_of`]), for evaluators that score several terms of one document.
    #[inline]
    pub fn score_of_inverse(&self, weight: f32, freq: u32, inverse: f32) -> f32 {
        self.score_of_key(weight, Self::key_of(freq, inverse))
    }

    /// [`Bm25::score`] for the shortest length of norm byte `norm`: a block's bound from the
    /// norm bytes its skip entry keeps, with no length conversion under Lucene's norms.
    #[inline]
    pub fn score_of_norm(&self, weight: f32, freq: u32, norm: u8) -> f32 {
        self.score_of_inverse(weight, freq, self.norm_inverse_of_norm(norm))
    }

    /// The score of a term of weight `weight` for a posting of saturation key `key`
    /// ([`Bm25::saturation_key`]); `score(w, f, l) == score_of_key(w, saturation_key(f, l))`.
    #[inline]
    pub fn score_of_key(&self, weight: f32, key: f32) -> f32 {
        weight - weight / (1f32 + key)
    }

    /// The average document length.
    pub fn avgdl(&self) -> f32 {
        self.avgdl
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn norms_match_lucene_small_float() {
        // Exact below 24, then 4 significant bits (values from Lucene's SmallFloat tests and
        // its byte4 table).
        for length in 0..24 {
            assert_eq!(norm_to_length(length_to_norm(length)), length);
        }
        assert_eq!(length_to_norm(24), 24);
        assert_eq!(norm_to_length(length_to_norm(40)), 40);
        assert_eq!(norm_to_length(length_to_norm(41)), 40);
        assert_eq!(norm_to_length(255), 24 + (15 << 27));
        let mut previous = 0;
        for norm in 0..=255u8 {
            let length = norm_to_length(norm);
            assert!(norm == 0 || length > previous, "decoded lengths increase");
            assert_eq!(
                length_to_norm(length),
                norm,
                "a decoded length encodes back"
            );
            previous = length;
        }
        // Monotone: longer documents never get a smaller norm.
        let mut last = 0;
        for length in 0..100_000 {
            let norm = length_to_norm(length);
            assert!(norm >= last);
            last = norm;
            assert!(norm_to_length(norm) <= length);
        }
    }

    #[test]
    fn scores_grow_with_freq_and_fall_with_length() {
        let bm25 = Bm25::new(Scoring::Bm25, Norms::Lucene, 1000, 100_000);
        let w = bm25.idf(10);
        assert!(w > 0.0);
        assert!(bm25.score(w, 2, 100) > bm25.score(w, 1, 100));
        assert!(bm25.score(w, 2, 100) >= bm25.score(w, 2, 200));
        assert!(bm25.idf(1) > bm25.idf(500));
        let fixed = Bm25::new(Scoring::Bm25Fixed, Norms::Exact, 1000, 100_000);
        assert_eq!(fixed.score(w, 3, 10), fixed.score(w, 3, 10_000));
    }
}
