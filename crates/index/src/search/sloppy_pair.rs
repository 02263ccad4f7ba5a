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
//! Here each position of the first term is ranked among the second's (how many come before it
//! in the merge), eight at a time with AVX-512 compares, and a pass over the first term's
//! positions reads the passes off the ranks: into a run of the first term from the second's
//! value before it, and out of a run to the second's value after it, in merge order. Equal
//! positions (an exact occurrence, after the terms' offsets) go as the sweep takes them: at
//! the start by the terms' (offset, place) order, later first from the list the merge is in,
//! so a chain of ties alternates. The weights are summed in the same order as the sweep's,
//! adding 0 for a pass past the slop, so the frequency is the sweep's to the bit (a property
//! test compares them).

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
        scratch
            .ranks
            .resize(n.div_ceil(avx512::LANES) * avx512::LANES, 0);
        // SAFETY: AVX-512 F was detected; `ranks` holds the short list in whole vectors.
        unsafe { avx512::ranks_below(&scratch.first, &scratch.second, &mut scratch.ranks) };
        scratch.kept.resize(2 * n, 0.0);
        return Some(sum_passes(
            &scratch.first,
            &scratch.second,
            &mut scratch.ranks[..n],
            short_wins_start,
            weights,
            &mut scratch.kept,
        ));
    }
    let _ = (shifts, offsets, weights, scratch);
    None
}

/// The sum of the weights of the merge's passes between `a` and `b` (shifted positions,
/// each increasing), given `ranks[i]`, the number of values of `b` below `a[i]`, which
/// becomes the number of values of `b` before `a[i]` in the merge (ties resolved). `kept`
/// (two values per value of `a`) collects the weights within the slop, in order.
fn sum_passes(
    a: &[i64],
    b: &[i64],
    ranks: &mut [u32],
    a_wins_start: bool,
    weights: &[f32],
    kept: &mut [f32],
) -> f32 {
    // Ties: a value of `b` equal to `a[i]` comes first when the value before the pair is
    // `b`'s; a sequential pass, but one that branches only where values are equal.
    let mut previous_b_first = false;
    for i in 0..a.len() {
        let below = ranks[i] as usize;
        if below < b.len() && b[below] == a[i] {
            let b_first = match (i.checked_sub(1), below.checked_sub(1)) {
                (None, None) => !a_wins_start,
                (Some(_), None) => false,
                (None, Some(_)) => true,
                (Some(p), Some(q)) if a[p] > b[q] => false,
                (Some(p), Some(q)) if b[q] > a[p] => true,
                // The pair before is a tie too; its second value is the one before this pair.
                _ => !previous_b_first,
            };
            ranks[i] += u32::from(b_first);
            previous_b_first = b_first;
        }
    }
    // Passes in merge order: into `a[i]`'s run (when values of `b` come between it and the
    // value of `a` before), then out of it (when values of `b` come before the next). A pass
    // that is not there, or longer than the slop, has length `beyond`, and is not kept: the
    // sum then adds only weights, in order, with no branch to choose them.
    let beyond = weights.len() - 1;
    let length = |gap: i64| gap.clamp(0, beyond as i64) as usize;
    let mut count = 0usize;
    let mut previous_rank = 0u32;
    for i in 0..a.len() {
        let rank = ranks[i];
        let next_rank = ranks.get(i + 1).copied().unwrap_or(b.len() as u32 + 1);
        let r = rank as usize;
        // Both neighbours are read whether or not the passes are there (clamped into `b`),
        // and the lengths chosen after: a branch here goes either way at random.
        let before = length(a[i] - b[r.max(1) - 1]);
        let after = length(b[r.min(b.len() - 1)] - a[i]);
        let into = select(rank > previous_rank, before, beyond);
        let out = select(next_rank > rank && r < b.len(), after, beyond);
        kept[count] = weights[into];
        count += usize::from(into != beyond);
        kept[count] = weights[out];
        count += usize::from(out != beyond);
        previous_rank = rank;
    }
    kept[..count].iter().fold(0f32, |freq, &w| freq + w)
}

/// `if condition { yes } else { no }`, computed without a branch.
#[inline(always)]
fn select(condition: bool, yes: usize, no: usize) -> usize {
    let mask = usize::from(condition).wrapping_neg();
    (yes & mask) | (no & !mask)
}

/// Whether some `p` of `a` and `q` of `b` (each increasing) have
/// `|(q - b_shift) - (p - a_shift)| <= slop`, by ranks: the least value of `b` not below
/// `p - slop` is the only one to check for each `p`. `None` where the CPU lacks AVX-512 F.
///
/// The merge this replaces stepped one value at a time, each step waiting on the compare of
/// the one before; here each value of `b` is compared with eight of `a` at once, and the
/// check stops after the first eight values of `a` that find a match.
pub(super) fn within_slop_by_ranks(
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

    /// [`super::within_slop_by_ranks`].
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
        if b.is_empty() {
            return false;
        }
        let b_len = _mm512_set1_epi64(b.len() as i64);
        let one = _mm512_set1_epi64(1);
        // In `b`'s frame: `p - a_shift + b_shift` is where `p` stands among `b`'s values.
        let shift = _mm512_set1_epi64(b_shift - a_shift);
        let slop_lanes = _mm512_set1_epi64(slop);
        let mut j = 0usize;
        for values in a.chunks(LANES) {
            let real = ((1u32 << values.len()) - 1) as __mmask8;
            // SAFETY: the mask reads the chunk's `values.len()` values only.
            let p = unsafe { _mm512_maskz_loadu_epi32(real.into(), values.as_ptr().cast()) };
            let centre = _mm512_add_epi64(_mm512_cvtepu32_epi64(_mm512_castsi512_si256(p)), shift);
            let low = _mm512_sub_epi64(centre, slop_lanes);
            let high = _mm512_add_epi64(centre, slop_lanes);
            // The highest low of the chunk: values of `b` below it may be below some lanes'
            // lows; the values past it are below none.
            let highest = i64::from(values[values.len() - 1]) + (b_shift - a_shift) - slop;
            let mut ranks = _mm512_set1_epi64(j as i64);
            while let Some(&y) = b.get(j).filter(|&&y| i64::from(y) < highest) {
                let below = _mm512_cmplt_epi64_mask(_mm512_set1_epi64(i64::from(y)), low);
                ranks = _mm512_mask_add_epi64(ranks, below, ranks, one);
                j += 1;
            }
            // The least value of `b` not below each lane's low, where there is one.
            let inside = _mm512_mask_cmplt_epi64_mask(real, ranks, b_len);
            // SAFETY: the gather reads lanes whose rank is inside `b` only.
            let next = unsafe {
                _mm512_mask_i64gather_epi32::<4>(
                    _mm256_setzero_si256(),
                    inside,
                    ranks,
                    b.as_ptr().cast(),
                )
            };
            let next = _mm512_cvtepu32_epi64(next);
            if _mm512_mask_cmple_epi64_mask(inside, next, high) != 0 {
                return true;
            }
            if j == b.len() {
                // Every value of `b` lies below this chunk's highest low, and so below every
                // later chunk's lows.
                return false;
            }
        }
        false
    }

    /// Values of the first list ranked at a time.
    pub(super) const LANES: usize = 8;

    /// Writes to `ranks[i]` the number of values of `b` below `a[i]` (both increasing): eight
    /// values of `a` at a time, each value of `b` below the eighth compared with all eight.
    ///
    /// # Safety
    /// AVX-512 F is available; `ranks` holds `a.len()` rounded up to [`LANES`] values.
    #[target_feature(enable = "avx512f")]
    pub(super) unsafe fn ranks_below(a: &[i64], b: &[i64], ranks: &mut [u32]) {
        debug_assert!(ranks.len() >= a.len().div_ceil(LANES) * LANES);
        let mut j = 0usize;
        for (chunk, values) in a.chunks(LANES).enumerate() {
            let real = ((1u32 << values.len()) - 1) as __mmask8;
            // SAFETY: the mask reads the chunk's `values.len()` values only.
            let lanes = unsafe { _mm512_maskz_loadu_epi64(real, values.as_ptr()) };
            let highest = values[values.len() - 1];
            let mut counts = _mm512_set1_epi64(j as i64);
            let one = _mm512_set1_epi64(1);
            // Every value of `b` below the chunk's highest may be below some of its lanes;
            // those past it are below none.
            while let Some(&y) = b.get(j).filter(|&&y| y < highest) {
                let below = _mm512_cmplt_epi64_mask(_mm512_set1_epi64(y), lanes);
                counts = _mm512_mask_add_epi64(counts, below, counts, one);
                j += 1;
            }
            let narrow = _mm512_cvtepi64_epi32(counts);
            // SAFETY: `ranks` holds whole chunks of LANES (the caller's contract).
            unsafe {
                _mm256_storeu_si256(ranks.as_mut_ptr().add(chunk * LANES).cast(), narrow);
            }
        }
    }
}
