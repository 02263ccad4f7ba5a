//! The sloppy frequency of a phrase of two distinct terms, from each position's rank in the
//! other term's list instead of a sweep.
//!
//! Lucene's sweep over two cursors ([`super::phrase_matcher`]) moves the lesser cursor on
//! until it passes the other, and counts a match whenever a window closes within the slop.
//! Every window closes where the merge of the two lists passes from one list to the other, and
//! spans the two values it passes between; so the frequency is the sum, in merge order, of the
//! weights of those passes within the slop. The sweep decides at every step which cursor
//! moves, a branch that a stop word's positions against another's mispredict about every other
//! step (over half the time of sloppy phrase queries went there).
//!
//! Here each position of the shorter list is ranked among the other's (how many come before
//! it in the merge), eight at a time with AVX-512 compares, and the passes are read off the
//! ranks, eight values at a time too: into a run of the first list from the second's value
//! before it, and out of a run to the second's value after it, in merge order. Equal positions
//! (an exact occurrence, after the terms' offsets) go as the sweep takes them: at the start by
//! the terms' (offset, place) order, later first from the list the merge is in, so a chain of
//! ties alternates; they are found eight at a time and resolved one by one. The weights within
//! the slop are packed in merge order and summed in the sweep's order, so the frequency is the
//! sweep's to the bit (a property test compares them). The passes read eight at a time took
//! the luceneutil sloppy TOP_10 tasks from 9.9-10.0 ms to 8.4 ms.
//!
//! Whether a pair occurs within the slop at all ([`within_slop_by_vectors`]) compares each
//! value of one list with eight of the other at once, and stops at the first near one.

/// An upper bound on the sloppy frequency of two distinct terms whose frequencies in the
/// document are `freqs`, whatever their positions and the slop.
///
/// Each match is a pass of the merge from a value of one term to one of the other and weighs
/// `1 / (1 + distance)`. Each value of the rarer term has at most two passes, one on either
/// side, and only one of them can be of distance 0 (the other term's values are distinct), so
/// they weigh at most 1.5 together. The frequency is a sum of `f32`s, which may round up by a
/// relative `n · ε` over `n` terms: the bound allows for it. (The sweep moves a cursor on for
/// every match but the last, which bounds it by the two frequencies' sum less one too.)
pub(super) fn pair_freq_bound(freqs: &[u32; 2]) -> f32 {
    let least = f64::from(freqs[0].min(freqs[1]));
    let passes = 2.0 * least + 2.0;
    let rounding = 1.0 + passes * f64::from(f32::EPSILON);
    let sweep_moves = (f64::from(freqs[0]) + f64::from(freqs[1]) - 1.0).max(0.0);
    (1.5 * least * rounding).min(sweep_moves) as f32
}

/// Scratch space of [`sloppy_pair_freq`], kept between documents.
#[derive(Default)]
pub(super) struct SloppyPairScratch {
    first: Vec<i64>,
    second: Vec<i64>,
    ranks: Vec<u32>,
    /// Per eight values of the shorter list, which of them the longer holds too.
    ties: Vec<u8>,
    /// The weights of the passes within the slop, in merge order.
    kept: Vec<f32>,
}

/// The sweep's frequency of two distinct terms with values `first` and `second` (each
/// increasing), whose positions less their offsets are the values less `shifts`, and whose
/// offsets are `offsets`; `weights` holds the weight of each match length up to the slop, then
/// 0. `None` where the CPU lacks AVX-512 F.
pub(super) fn sloppy_pair_freq(
    first: &[u32],
    second: &[u32],
    shifts: [i64; 2],
    offsets: [i64; 2],
    weights: &[f32],
    scratch: &mut SloppyPairScratch,
) -> Option<f32> {
    if first.is_empty() || second.is_empty() {
        return Some(0.0);
    }
    #[cfg(target_arch = "x86_64")]
    if std::arch::is_x86_feature_detected!("avx512f") {
        let shifted = |values: &[u32], shift: i64, out: &mut Vec<i64>| {
            out.clear();
            out.extend(values.iter().map(|&v| i64::from(v) - shift));
        };
        // The shorter list is ranked in the longer: one step per value of the shorter.
        // At the start, a tie goes to the lesser (offset, place) key; the first term's place
        // is 0.
        let (short, long, short_wins_start) = if first.len() <= second.len() {
            (0, 1, offsets[0] <= offsets[1])
        } else {
            (1, 0, offsets[1] < offsets[0])
        };
        let lists = [first, second];
        shifted(lists[short], shifts[short], &mut scratch.first);
        shifted(lists[long], shifts[long], &mut scratch.second);
        let n = scratch.first.len();
        // `ranks[0]` is 0 (no value of `b` before the start), `ranks[1 + i]` the rank of
        // `a[i]`, and `ranks[1 + n]` past every value of `b` (no run after the end): each
        // value's rank, the one before and the one after are read as three vectors.
        let whole = n.div_ceil(avx512::LANES) * avx512::LANES;
        // Every value read is written first, or lies in a lane masked off.
        scratch.ranks.resize(1 + whole + avx512::LANES + 1, 0);
        scratch.ranks[0] = 0;
        scratch.ties.resize(n.div_ceil(avx512::LANES), 0);
        // SAFETY: AVX-512 F was detected; `ranks[1..]` holds the short list in whole vectors,
        // `ties` one per vector.
        unsafe {
            avx512::ranks_below(
                &scratch.first,
                &scratch.second,
                &mut scratch.ranks[1..],
                &mut scratch.ties,
            )
        };
        scratch.ranks[1 + n] = scratch.second.len() as u32 + 1;
        scratch.kept.resize(2 * whole + 2 * avx512::LANES, 0.0);
        // SAFETY: AVX-512 F was detected; the lists are not empty, `ranks` and `kept` are
        // laid out and sized as `sum_passes` needs.
        return Some(unsafe {
            avx512::sum_passes(
                &scratch.first,
                &scratch.second,
                &mut scratch.ranks,
                &scratch.ties,
                short_wins_start,
                weights,
                &mut scratch.kept,
            )
        });
    }
    let _ = (shifts, offsets, weights, scratch);
    None
}

/// Whether the value of `b` equal to `a[i]`, `b[below]`, comes before it in the merge: when
/// the value before the pair is `b`'s. At the start, the tie goes to `a` when `a_wins_start`;
/// after a pair that is a tie too (whose second value is the one before this pair), it goes
/// the other way from that pair's, given as `previous_b_first`.
fn b_comes_first(
    a: &[i64],
    b: &[i64],
    i: usize,
    below: usize,
    a_wins_start: bool,
    previous_b_first: bool,
) -> bool {
    match (i.checked_sub(1), below.checked_sub(1)) {
        (None, None) => !a_wins_start,
        (Some(_), None) => false,
        (None, Some(_)) => true,
        (Some(p), Some(q)) if a[p] > b[q] => false,
        (Some(p), Some(q)) if b[q] > a[p] => true,
        _ => !previous_b_first,
    }
}

/// Whether some `p` of `a` and `q` of `b` (each increasing) have
/// `|(q - b_shift) - (p - a_shift)| <= slop`: each value of `b` is compared with eight of `a`
/// at once, stopping at the first near one. `None` where the CPU lacks AVX-512 F.
///
/// The merge this replaces stepped one value at a time, each step waiting on the compare of
/// the one before.
pub(super) fn within_slop_by_vectors(
    a: &[u32],
    a_shift: i64,
    b: &[u32],
    b_shift: i64,
    slop: i64,
) -> Option<bool> {
    #[cfg(target_arch = "x86_64")]
    if std::arch::is_x86_feature_detected!("avx512f") {
        // SAFETY: AVX-512 F was detected.
        return Some(unsafe { avx512::within_slop(a, a_shift, b, b_shift, slop) });
    }
    let _ = (a, a_shift, b, b_shift, slop);
    None
}

#[cfg(target_arch = "x86_64")]
mod avx512 {
    use std::arch::x86_64::*;

    /// Values of the first list ranked at a time.
    pub(super) const LANES: usize = 8;

    /// [`super::within_slop_by_vectors`].
    ///
    /// # Safety
    /// AVX-512 F is available.
    #[target_feature(enable = "avx512f")]
    pub(super) unsafe fn within_slop(
        a: &[u32],
        a_shift: i64,
        b: &[u32],
        b_shift: i64,
        slop: i64,
    ) -> bool {
        // In `b`'s frame: `p - a_shift + b_shift` is where `p` stands among `b`'s values, and
        // a value `y` of `b` is near it when `y - (centre - slop)` is at most `2 · slop`,
        // compared unsigned (below the low end it wraps past that).
        let shift = b_shift - a_shift;
        let shift_lanes = _mm512_set1_epi64(shift - slop);
        let width = _mm512_set1_epi64(2 * slop);
        let mut j = 0usize;
        for values in a.chunks(LANES) {
            let real = lanes_below(values.len());
            // SAFETY: the mask reads the chunk's `values.len()` values only.
            let p = unsafe { _mm512_maskz_loadu_epi32(real.into(), values.as_ptr().cast()) };
            let low = _mm512_add_epi64(
                _mm512_cvtepu32_epi64(_mm512_castsi512_si256(p)),
                shift_lanes,
            );
            let near = |y: u32| {
                let gap = _mm512_sub_epi64(_mm512_set1_epi64(i64::from(y)), low);
                _mm512_mask_cmple_epu64_mask(real, gap, width) != 0
            };
            // Values of `b` below the chunk's highest low may be near some of its values;
            // the first one past it is the least not below every low, the only other one to
            // check. Values before them lay below an earlier chunk's highest low, and so
            // below every low of this one.
            let highest = i64::from(values[values.len() - 1]) + shift - slop;
            while let Some(&y) = b.get(j).filter(|&&y| i64::from(y) < highest) {
                if near(y) {
                    return true;
                }
                j += 1;
            }
            match b.get(j) {
                Some(&y) if near(y) => return true,
                Some(_) => {}
                None => return false,
            }
        }
        false
    }

    /// The sum of the weights of the merge's passes between `a` and `b` (shifted positions,
    /// each increasing, neither empty), given `ranks[1 + i]`, the number of values of `b`
    /// below `a[i]`, between `ranks[0] = 0` and `ranks[1 + n] = b.len() + 1`. Ties are
    /// resolved first, making each rank the number of values of `b` before `a[i]` in the
    /// merge. Then eight values of `a` at a time: the pass into each one's run (when values of
    /// `b` come between it and the value of `a` before) and out of it (when values of `b` come
    /// before the next), their lengths clamped to the slop's end (`weights.len() - 1`: the
    /// table ends with a weight of 0 past the slop), their weights computed as the sweep
    /// computes them, and those within the slop packed into `kept` in merge order. The sum adds
    /// them in that order, as the sweep does.
    ///
    /// # Safety
    /// AVX-512 F is available; `ranks` holds `1 + n` rounded up to [`LANES`] plus
    /// `LANES + 1` values, and `kept` `2 · n` rounded up to [`LANES`] plus `2 · LANES`.
    #[target_feature(enable = "avx512f")]
    pub(super) unsafe fn sum_passes(
        a: &[i64],
        b: &[i64],
        ranks: &mut [u32],
        ties: &[u8],
        a_wins_start: bool,
        weights: &[f32],
        kept: &mut [f32],
    ) -> f32 {
        let n = a.len();
        let whole = n.div_ceil(LANES) * LANES;
        debug_assert!(!b.is_empty() && ranks.len() > whole + LANES + 1);
        debug_assert!(kept.len() >= 2 * whole + 2 * LANES);
        let b_len = _mm512_set1_epi64(b.len() as i64);
        let b_last = _mm512_set1_epi64(b.len() as i64 - 1);
        // Ties: the values of `a` that `b` holds too (found while ranking). Few values tie, and
        // each depends on the tie before, so they are resolved one at a time.
        let mut previous_b_first = false;
        for (chunk, &equal) in ties.iter().enumerate().take(n.div_ceil(LANES)) {
            let i = chunk * LANES;
            let mut ties = equal;
            while ties != 0 {
                let lane = ties.trailing_zeros() as usize;
                ties &= ties - 1;
                let below = ranks[1 + i + lane] as usize;
                let b_first =
                    super::b_comes_first(a, b, i + lane, below, a_wins_start, previous_b_first);
                ranks[1 + i + lane] += u32::from(b_first);
                previous_b_first = b_first;
            }
        }
        let beyond = weights.len() as i64 - 1;
        let beyond_lanes = _mm512_set1_epi64(beyond);
        let zero = _mm512_setzero_si512();
        let one = _mm512_set1_epi64(1);
        // Into the run, out of it: the two passes of value `k` go to lanes `2k` and `2k + 1`.
        let interleave = _mm512_set_epi32(23, 7, 22, 6, 21, 5, 20, 4, 19, 3, 18, 2, 17, 1, 16, 0);
        let one_f = _mm512_set1_ps(1.0);
        let mut count = 0usize;
        for i in (0..n).step_by(LANES) {
            let real = lanes_below(n - i);
            // SAFETY: `ranks[i..]` holds `i + LANES + 2` values at least, `a[i..]` `real`'s.
            let (before_rank, rank, after_rank, value) = unsafe {
                let at = ranks.as_ptr().add(i);
                (
                    _mm512_cvtepu32_epi64(_mm256_loadu_si256(at.cast())),
                    _mm512_cvtepu32_epi64(_mm256_loadu_si256(at.add(1).cast())),
                    _mm512_cvtepu32_epi64(_mm256_loadu_si256(at.add(2).cast())),
                    _mm512_maskz_loadu_epi64(real, a.as_ptr().add(i)),
                )
            };
            // Both neighbours are read whether or not the passes are there (clamped into `b`:
            // a lane past `n` may hold the rank past the end).
            let before_at =
                _mm512_min_epi64(_mm512_sub_epi64(_mm512_max_epi64(rank, one), one), b_last);
            let after_at = _mm512_min_epi64(rank, b_last);
            // SAFETY: both indices lie in `b` (which is not empty), in every lane.
            let (before, after) = unsafe {
                (
                    _mm512_i64gather_epi64::<8>(before_at, b.as_ptr().cast()),
                    _mm512_i64gather_epi64::<8>(after_at, b.as_ptr().cast()),
                )
            };
            let clamp = |gap: __m512i| _mm512_min_epi64(_mm512_max_epi64(gap, zero), beyond_lanes);
            let into_length = clamp(_mm512_sub_epi64(value, before));
            let out_length = clamp(_mm512_sub_epi64(after, value));
            let into_there = _mm512_mask_cmpgt_epi64_mask(real, rank, before_rank);
            let out_there = _mm512_mask_cmpgt_epi64_mask(real, after_rank, rank)
                & _mm512_cmplt_epi64_mask(rank, b_len);
            let into = _mm512_mask_blend_epi64(into_there, beyond_lanes, into_length);
            let out = _mm512_mask_blend_epi64(out_there, beyond_lanes, out_length);
            let lengths = _mm512_permutex2var_epi32(
                _mm512_castsi256_si512(_mm512_cvtepi64_epi32(into)),
                interleave,
                _mm512_castsi256_si512(_mm512_cvtepi64_epi32(out)),
            );
            // Each weight as the sweep computes it, `1 / (1 + length)`: both divisions are
            // rounded once, so the same to the bit (and no gather from the table).
            let passes = _mm512_div_ps(one_f, _mm512_add_ps(one_f, _mm512_cvtepi32_ps(lengths)));
            let within = _mm512_cmpneq_epi32_mask(lengths, _mm512_set1_epi32(beyond as i32));
            // SAFETY: `kept[count..]` holds 16 values: `count` is at most `2 · i`.
            unsafe {
                _mm512_storeu_ps(
                    kept.as_mut_ptr().add(count),
                    _mm512_maskz_compress_ps(within, passes),
                );
            }
            count += within.count_ones() as usize;
        }
        kept[..count].iter().fold(0f32, |freq, &w| freq + w)
    }

    /// The mask of the first `left` lanes (all eight from eight on).
    #[inline]
    fn lanes_below(left: usize) -> __mmask8 {
        if left >= LANES {
            0xFF
        } else {
            ((1u32 << left) - 1) as __mmask8
        }
    }

    /// Writes to `ranks[i]` the number of values of `b` below `a[i]` (both increasing): eight
    /// values of `a` at a time, each value of `b` below the eighth compared with all eight. Bit
    /// `k` of `ties[c]` says whether `a[8c + k]` is in `b` too.
    ///
    /// # Safety
    /// AVX-512 F is available; `ranks` holds `a.len()` rounded up to [`LANES`] values, `ties`
    /// one per [`LANES`] values of `a`.
    #[target_feature(enable = "avx512f")]
    pub(super) unsafe fn ranks_below(a: &[i64], b: &[i64], ranks: &mut [u32], ties: &mut [u8]) {
        debug_assert!(ranks.len() >= a.len().div_ceil(LANES) * LANES);
        debug_assert!(ties.len() >= a.len().div_ceil(LANES));
        let mut j = 0usize;
        for (chunk, values) in a.chunks(LANES).enumerate() {
            let real = lanes_below(values.len());
            // SAFETY: the mask reads the chunk's `values.len()` values only.
            let lanes = unsafe { _mm512_maskz_loadu_epi64(real, values.as_ptr()) };
            let highest = values[values.len() - 1];
            let mut counts = _mm512_set1_epi64(j as i64);
            let mut equal: __mmask8 = 0;
            let one = _mm512_set1_epi64(1);
            // Every value of `b` below the chunk's highest may be below some of its lanes, or
            // equal to one; those past it are below none.
            while let Some(&y) = b.get(j).filter(|&&y| y < highest) {
                let y = _mm512_set1_epi64(y);
                let below = _mm512_cmplt_epi64_mask(y, lanes);
                counts = _mm512_mask_add_epi64(counts, below, counts, one);
                equal |= _mm512_mask_cmpeq_epi64_mask(real, y, lanes);
                j += 1;
            }
            // The highest itself may be in `b`: then it is the value the scan stopped at.
            if b.get(j) == Some(&highest) {
                equal |= 1 << (values.len() - 1);
            }
            ties[chunk] = equal;
            let narrow = _mm512_cvtepi64_epi32(counts);
            // SAFETY: `ranks` holds whole chunks of LANES (the caller's contract).
            unsafe {
                _mm256_storeu_si256(ranks.as_mut_ptr().add(chunk * LANES).cast(), narrow);
            }
        }
    }
}
