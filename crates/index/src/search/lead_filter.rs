//! The first test of a block-max AND window: which of the lead's postings can still make the
//! top k on their own score plus the other clauses' block bounds.
//!
//! A window holds up to a block of the lead's postings, and most of them fail this test once
//! the threshold has risen (a top-10 conjunction of two frequent terms drops nine in ten). The
//! test is one pass over the lead's DIDs and frequencies: the document's norm byte, its length
//! normalisation from the scorer's table, the saturation key `freq · inverse` compared with the
//! key floor. Keys grow with the score, so no score (a division) is computed for a posting the
//! test drops. With AVX2 the pass takes eight postings at a time: two gathers (norm byte,
//! normalisation), a multiply and a compare, and the survivors are packed to the front by a
//! lane permutation, with no branch per posting.

use apcache_codec::Isa;

use crate::segment::NormBytes;

/// Where the survivors go: their DIDs, length normalisations and frequencies.
/// Each slice must hold the lead's postings plus [`OUTPUT_SLACK`] values (vector stores write
/// whole vectors).
pub(super) struct Survivors<'w> {
    pub(super) docs: &'w mut [u32],
    pub(super) inverses: &'w mut [f32],
    pub(super) freqs: &'w mut [u32],
}

/// Values the outputs hold past the last possible survivor.
pub(super) const OUTPUT_SLACK: usize = 8;

/// The lead's postings of one window and how to score them.
pub(super) struct LeadPostings<'p> {
    /// DIDs, ascending.
    pub(super) docs: &'p [u32],
    /// Their frequencies.
    pub(super) freqs: &'p [u32],
}

/// Writes the postings of `lead` whose key `freq · table[norm byte]` reaches `floor` to
/// `out`, in order; returns how many. A DID the norms do not cover counts as length 0 (norm
/// byte 0), as [`crate::segment::DocLengths::of`] reads it.
pub(super) fn filter_lead(
    lead: &LeadPostings<'_>,
    norms: &NormBytes<'_>,
    table: &[f32; 256],
    floor: f32,
    out: Survivors<'_>,
    isa: Isa,
) -> usize {
    let n = lead.docs.len();
    assert!(
        lead.freqs.len() == n
            && out.docs.len() >= n + OUTPUT_SLACK
            && out.inverses.len() >= n + OUTPUT_SLACK
            && out.freqs.len() >= n + OUTPUT_SLACK,
        "filter_lead: mismatched slices"
    );
    #[cfg(target_arch = "x86_64")]
    if isa >= Isa::Avx2
        && std::arch::is_x86_feature_detected!("avx2")
        && std::arch::is_x86_feature_detected!("popcnt")
    {
        // SAFETY: AVX2 and POPCNT are present; the lengths are checked above.
        return unsafe { avx2::filter_lead(lead, norms, table, floor, out) };
    }
    let _ = isa;
    filter_scalar(
        lead,
        |doc| table[usize::from(norms.of(doc))],
        floor,
        out,
        0,
        0,
    )
}

/// [`filter_lead`] for a scorer or segment without norm bytes (exact lengths, several runs of
/// DIDs): the same test, one posting at a time, with each DID's normalisation from
/// `inverse_of`.
pub(super) fn filter_lead_with(
    lead: &LeadPostings<'_>,
    inverse_of: impl Fn(u32) -> f32,
    floor: f32,
    out: Survivors<'_>,
) -> usize {
    filter_scalar(lead, inverse_of, floor, out, 0, 0)
}

/// The portable pass, from posting `from` on, with `kept` survivors already written.
fn filter_scalar(
    lead: &LeadPostings<'_>,
    inverse_of: impl Fn(u32) -> f32,
    floor: f32,
    out: Survivors<'_>,
    from: usize,
    mut kept: usize,
) -> usize {
    let n = lead.docs.len();
    let (docs, freqs) = (&lead.docs[from..n], &lead.freqs[from..n]);
    for (&doc, &freq) in docs.iter().zip(freqs) {
        let inverse = inverse_of(doc);
        out.docs[kept] = doc;
        out.inverses[kept] = inverse;
        out.freqs[kept] = freq;
        kept += usize::from(freq as f32 * inverse >= floor);
    }
    kept
}

#[cfg(target_arch = "x86_64")]
mod avx2 {
    use std::arch::x86_64::*;

    use super::{filter_scalar, LeadPostings, NormBytes, Survivors};
    use crate::search::sorted_intersect::avx2::GATHER;

    /// [`super::filter_lead`] with AVX2.
    ///
    /// # Safety
    /// The CPU has AVX2 and POPCNT; the slices are as [`super::filter_lead`] checks.
    #[target_feature(enable = "avx2,popcnt")]
    pub(super) unsafe fn filter_lead(
        lead: &LeadPostings<'_>,
        norms: &NormBytes<'_>,
        table: &[f32; 256],
        floor: f32,
        out: Survivors<'_>,
    ) -> usize {
        let n = lead.docs.len();
        let floor_v = _mm256_set1_ps(floor);
        let bytes = norms.bytes();
        let first_v = _mm256_set1_epi32(norms.first() as i32);
        // Offsets into the run at most this are inside it (none when the run is empty).
        let last_v = _mm256_set1_epi32(bytes.len().wrapping_sub(1).min(u32::MAX as usize) as i32);
        let (mut i, mut kept) = (0usize, 0usize);
        while i + 8 <= n {
            // SAFETY: i + 8 <= n = docs.len() = freqs.len(); an unaligned load.
            let docs = unsafe { _mm256_loadu_si256(lead.docs.as_ptr().add(i).cast()) };
            // Scalar loads, not gathers: on the AMD cores measured, eight byte loads and eight
            // table loads beat two gathers by a tenth. One vector test finds the eight DIDs
            // inside the norms' run (they always are, in a sound index), so the loads need no
            // check each.
            let offsets = _mm256_sub_epi32(docs, first_v);
            let inside = _mm256_cmpeq_epi32(_mm256_min_epu32(offsets, last_v), offsets);
            let lane_inverses: [f32; 8] =
                if !bytes.is_empty() && _mm256_movemask_ps(_mm256_castsi256_ps(inside)) == 0xFF {
                    let mut lanes = [0u32; 8];
                    // SAFETY: `lanes` is eight u32, 32 bytes, stored unaligned; every offset is at
                    // most `bytes.len() - 1`, as tested above, so `get_unchecked` is in bounds.
                    unsafe {
                        _mm256_storeu_si256(lanes.as_mut_ptr().cast(), offsets);
                        std::array::from_fn(|j| {
                            table[usize::from(*bytes.get_unchecked(lanes[j] as usize))]
                        })
                    }
                } else {
                    std::array::from_fn(|j| table[usize::from(norms.of(lead.docs[i + j]))])
                };
            // SAFETY: `lane_inverses` is eight f32; i + 8 <= n = freqs.len(); unaligned loads.
            let (inverse, freqs) = unsafe {
                (
                    _mm256_loadu_ps(lane_inverses.as_ptr()),
                    _mm256_loadu_si256(lead.freqs.as_ptr().add(i).cast()),
                )
            };
            let keys = _mm256_mul_ps(_mm256_cvtepi32_ps(freqs), inverse);
            let pass = _mm256_cmp_ps::<_CMP_GE_OQ>(keys, floor_v);
            let mask = _mm256_movemask_ps(pass) as usize;
            // SAFETY: a row of `GATHER` is 8 bytes, which `_mm_loadl_epi64` reads unaligned.
            let gather =
                _mm256_cvtepu8_epi32(unsafe { _mm_loadl_epi64(GATHER[mask].as_ptr().cast()) });
            // SAFETY: kept <= i, and the outputs hold n + 8 values (checked by the caller), so
            // the eight lanes at `kept` are within each; unaligned stores.
            unsafe {
                _mm256_storeu_si256(
                    out.docs.as_mut_ptr().add(kept).cast(),
                    _mm256_permutevar8x32_epi32(docs, gather),
                );
                _mm256_storeu_ps(
                    out.inverses.as_mut_ptr().add(kept),
                    _mm256_permutevar8x32_ps(inverse, gather),
                );
                _mm256_storeu_si256(
                    out.freqs.as_mut_ptr().add(kept).cast(),
                    _mm256_permutevar8x32_epi32(freqs, gather),
                );
            }
            kept += mask.count_ones() as usize;
            i += 8;
        }
        filter_scalar(
            lead,
            |doc| table[usize::from(norms.of(doc))],
            floor,
            out,
            i,
            kept,
        )
    }
}

#[cfg(test)]
mod tests {
    use proptest::prelude::*;

    use super::*;

    fn reference(
        lead: &LeadPostings<'_>,
        norms: &NormBytes<'_>,
        table: &[f32; 256],
        floor: f32,
    ) -> Vec<(u32, f32, u32)> {
        lead.docs
            .iter()
            .zip(lead.freqs)
            .filter_map(|(&doc, &freq)| {
                let inverse = table[usize::from(norms.of(doc))];
                (freq as f32 * inverse >= floor).then_some((doc, inverse, freq))
            })
            .collect()
    }

    proptest! {
        #[test]
        fn keeps_exactly_the_postings_whose_key_reaches_the_floor(
            first in 0u32..1000,
            count in 0u32..300,
            picks in proptest::collection::btree_set(0u32..340, 0..256),
            seed in any::<u64>(),
            floor in 0f32..4.0,
        ) {
            let mut state = seed | 1;
            let mut next = || {
                state ^= state << 13;
                state ^= state >> 7;
                state ^= state << 17;
                state
            };
            let bytes: Vec<u8> = (0..count).map(|_| next() as u8).collect();
            let norms = NormBytes::new(first, &bytes);
            let table: [f32; 256] = std::array::from_fn(|i| 1.0 / (1.0 + i as f32 / 16.0));
            // DIDs around the segment's run, some outside it.
            let docs: Vec<u32> = picks
                .iter()
                .map(|&p| (first + p).saturating_sub(20))
                .collect::<std::collections::BTreeSet<_>>()
                .into_iter()
                .collect();
            let freqs: Vec<u32> = docs.iter().map(|_| (next() % 6 + 1) as u32).collect();
            let lead = LeadPostings { docs: &docs, freqs: &freqs };
            let expected = reference(&lead, &norms, &table, floor);
            for isa in Isa::all_supported() {
                let room = docs.len() + OUTPUT_SLACK;
                let (mut d, mut inv, mut f) = (vec![0; room], vec![0.0; room], vec![0; room]);
                let out = Survivors { docs: &mut d, inverses: &mut inv, freqs: &mut f };
                let kept = filter_lead(&lead, &norms, &table, floor, out, isa);
                let got: Vec<(u32, f32, u32)> = (0..kept).map(|k| (d[k], inv[k], f[k])).collect();
                prop_assert_eq!(&got, &expected, "isa {:?}", isa);
            }
        }
    }
}
